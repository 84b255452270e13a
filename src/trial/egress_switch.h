// A trial's ways out between phases (docs/environment.md "Per-phase policy"): the resolver's mode
// and the egress proxy's place on the task network and its allowlist follow the runner's phase.
#pragma once

#include <string>

#include "core/clock.h"
#include "core/result.h"
#include "engine/client.h"
#include "manifest/environment.h"
#include "stack/up.h"

namespace forge::trial {

// A phase's network: its policy and, under limited_internet, which of the plan's allowlists
// (policy::StackPlan::allowlists; 0 the manifest's).
struct PhaseNet {
  manifest::NetworkPolicy policy = manifest::NetworkPolicy::kNoInternet;
  int allowlist = 0;
};

// The proxy's config as the trial last put it: an allowlist's index, or kOpenProxy.
inline constexpr int kOpenProxy = -1;
struct ProxyState {
  int conf = 0;  // at create: the first allowlist's
};

// The resolver as the phase has it (StackPlan::resolver_switches): on the outward network and
// answering every name in a full_internet phase, off it in the others and answering the phase's
// allowlist (limited_internet) or no name. The switch is a signal; it counts once the resolver's
// own log line says so.
Status switch_resolver(engine::Client& c, const stack::UpResult& up, PhaseNet to, Millis timeout);

// Before the runner moves: the proxy leaves the task network unless the next phase keeps it, with
// the same config (StackPlan::proxy_switches).
Status detach_proxy(engine::Client& c, const stack::UpResult& up, PhaseNet to, ProxyState& state);
// After the move is proved: the proxy given the phase's config (the allowlist's, or open for a
// full_internet phase of a runner that keeps the proxy variables), then on the task network as
// its alias; each step checked (squid's own line, the daemon's inspect).
Status attach_proxy(engine::Client& c, const stack::UpResult& up, PhaseNet to, ProxyState& state, Deadline deadline);

}  // namespace forge::trial
