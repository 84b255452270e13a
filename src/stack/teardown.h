// Removes a stack by label: containers first (networks can be deleted under stopped containers),
// then volumes left with its label, then networks, then the host firewall rules. Idempotent; safe
// to run on a half-built stack.
#pragma once

#include <string>
#include <vector>

#include "engine/client.h"
#include "engine/containers.h"

namespace forge::stack {

struct TeardownReport {
  int containers = 0, volumes = 0, networks = 0;
  std::vector<std::string> errors;  // what could not be removed, named
  bool clean() const { return errors.empty(); }
};

TeardownReport remove_stack(engine::Client& c, const std::string& stack);

// The order remove_stack removes containers in: one group of every container on a network, one
// after another, and each container on none a group of its own, the groups side by side. Two
// containers leaving one network at once can deadlock Docker 20.10's libnetwork (Debian 12's
// docker.io 20.10.24: moby#42545, fixed upstream after it) — the daemon then answers no start,
// stop or network call until restarted.
std::vector<std::vector<std::string>> removal_groups(const std::vector<engine::ContainerSummary>& containers);

}  // namespace forge::stack
