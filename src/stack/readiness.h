// Waiting for containers to be ready: the proxy accepting connections, services healthy.
#pragma once

#include <atomic>
#include <string>

#include "core/clock.h"
#include "engine/client.h"

namespace forge::stack {

// Until squid logs that it accepts connections. Fails early, with its log, if it exits.
Status wait_proxy_ready(engine::Client& c, const std::string& id, Deadline deadline, const std::atomic<int>* interrupted);
// Until the healthcheck reports healthy; unhealthy or exited is an error carrying the log tail.
Status wait_healthy(engine::Client& c, const std::string& id, const std::string& name, Deadline deadline,
                    const std::atomic<int>* interrupted);

}  // namespace forge::stack
