// The egress proxy's configuration in a trial: put in before it starts, and switched between
// phases whose allowlists differ (docs/environment.md "Per-phase policy").
#pragma once

#include <string>

#include "core/clock.h"
#include "core/result.h"
#include "engine/client.h"

namespace forge::stack {

// squid.conf into the proxy's config volume (policy::kSquidConfDir), readable by squid's user.
Status put_squid_conf(engine::Client& c, const std::string& id, const std::string& conf);

// Puts `conf` and has the running squid re-read it (SIGHUP): done once squid says, after the
// signal, that it accepts connections again — the next phase may start only then. Fails, with
// squid's log, when it exits or does not say so before the deadline.
Status reconfigure_proxy(engine::Client& c, const std::string& id, const std::string& conf, Deadline deadline);

}  // namespace forge::stack
