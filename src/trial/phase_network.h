// The runner's network between phases (docs/environment.md "Per-phase policy"): moved onto the
// agent phase's networks before the agent's first process, and the move proved, not assumed.
#pragma once

#include <cstdint>
#include <set>
#include <vector>
#include <string>

#include "core/result.h"
#include "engine/client.h"
#include "manifest/environment.h"
#include "stack/up.h"
#include "trial/egress_switch.h"

namespace forge::trial {

// The gateways (host byte order) of the default routes in /proc/net/route's text (lines whose
// Destination is 00000000).
std::vector<std::uint32_t> default_gateways(std::string_view proc_net_route);

// Connects and disconnects the runner so that it is on exactly the networks `policy` plans, then
// verifies: the daemon's inspect lists those networks and no other, and from inside the runner
// the routing table has a default route through the outward network ("net") exactly when the
// policy has it. (Docker 20.10 gives a runner that joins an internal network after create a
// default route through that network's bridge, where Docker drops whatever would leave and
// forgectl's host rule whatever is for the host: that one is no way out.) An error when the
// runner is anywhere else: the phase must not start.
// `who` names the phase for messages ("the agent phase", "step 'two'").
// The trial's egress proxy and resolver follow (trial/egress_switch.h): closed before the runner
// moves, opened after its move is proved.
Status move_runner(engine::Client& c, const stack::UpResult& up, const std::string& runner, PhaseNet to,
                   const std::string& who, Millis timeout, ProxyState& proxy);

}  // namespace forge::trial
