// A trial's egress ledger as `forgectl show` and trial.html display it (egress.jsonl beside
// trial.json; core/egress_entry.h).
#pragma once

#include <optional>
#include <string>

#include "core/egress_entry.h"
#include "core/result.h"

namespace forge::results {

inline constexpr const char* kEgressFile = "egress.jsonl";
// The most lines show and the trial page list; the counts cover the whole ledger.
inline constexpr std::size_t kMaxEgressShown = 200;

// The ledger in `trial_dir`; nullopt when the trial recorded none (full_internet, no network, a
// run by an older forgectl). A file too large or unreadable is an error naming it.
Result<std::optional<EgressLedger>> read_egress_ledger(const std::string& trial_dir);

// "egress: 4 entries (3 blocked), 0 dropped" then one line per entry, indented.
std::string egress_text(const EgressLedger& l);
// The same as an HTML section: counts, then a table of entries (blocked rows marked).
std::string egress_html(const EgressLedger& l);

}  // namespace forge::results
