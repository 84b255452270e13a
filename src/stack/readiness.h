// Waiting for containers to be ready: the proxy accepting connections, services healthy.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "core/clock.h"
#include "engine/client.h"

namespace forge::stack {

// Until squid logs that it accepts connections. Fails early, with its log, if it exits.
Status wait_proxy_ready(engine::Client& c, const std::string& id, Deadline deadline, const std::atomic<int>* interrupted);
// Until the healthcheck reports healthy; unhealthy or exited is an error carrying the log tail.
// With `probe` (the healthcheck's own test), forgectl also runs that test itself while Docker's
// first check is still an interval away, and a pass counts as healthy: on Docker < 25 (no
// start_interval) a 1 s interval otherwise costs every stack a second.
Status wait_healthy(engine::Client& c, const std::string& id, const std::string& name, Deadline deadline,
                    const std::atomic<int>* interrupted, const std::vector<std::string>* probe = nullptr,
                    Millis probe_timeout = Millis(2000));

}  // namespace forge::stack
