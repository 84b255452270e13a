// The runner's network between phases (docs/environment.md "Per-phase policy"): moved onto the
// agent phase's networks before the agent's first process, and the move proved, not assumed.
#pragma once

#include <set>
#include <string>

#include "core/result.h"
#include "engine/client.h"
#include "manifest/environment.h"
#include "stack/up.h"

namespace forge::trial {

// The default route in /proc/net/route's text (a line whose Destination is 00000000).
bool has_default_route(std::string_view proc_net_route);

// Connects and disconnects the runner so that it is on exactly the networks `policy` plans, then
// verifies: the daemon's inspect lists those networks and no other, and from inside the runner
// the routing table has a way out exactly when one of them leads out ("net"). An error when the
// runner is anywhere else: the phase must not start.
// `who` names the phase for messages ("the agent phase", "step 'two'").
Status move_runner(engine::Client& c, const stack::UpResult& up, const std::string& runner,
                   manifest::NetworkPolicy policy, const std::string& who, Millis timeout);

}  // namespace forge::trial
