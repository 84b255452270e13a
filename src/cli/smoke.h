// `forgectl doctor --smoke`: proves end to end that this host can run a hardened sandbox.
#pragma once

#include <iosfwd>

#include "engine/client.h"

namespace forge::cli {

// Builds the runner image if missing, brings up an internal network and a hardened runner,
// checks the hardening took, runs a command and a command that must time out, and removes
// everything again. Prints one line per step to `out`.
Status run_smoke(engine::Client& c, const HostSettings& host, std::ostream& out);

// The sweep's enforcement probe (sweep/egress_probe.h) for no_internet and limited_internet, the
// squid image built first when missing; one line per policy and per check. Fails when a probe does.
Status run_egress_probes(engine::Client& c, const HostSettings& host, std::ostream& out);

}  // namespace forge::cli
