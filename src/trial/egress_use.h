// A trial's egress ledger, read from its resolver's and egress proxy's logs (policy/egress_log.h).
#pragma once

#include <optional>
#include <vector>

#include "core/egress_entry.h"
#include "core/result.h"
#include "engine/client.h"
#include "policy/egress_log.h"
#include "stack/up.h"

namespace forge::trial {

// The phase a progress step belongs to in the ledger: up, setup, healthcheck and tools are
// "setup"; "agent"; "grade"; nullptr for the rest (down).
const char* ledger_phase(std::string_view progress_step);

// The ledger so far; nullopt for a stack with neither a resolver nor a proxy (full_internet, or
// no network at all), where there is nothing to record.
Result<std::optional<EgressLedger>> read_egress_ledger(engine::Client& c, const stack::UpResult& up,
                                                       const std::vector<policy::PhaseMark>& marks);

}  // namespace forge::trial
