// Removes a stack by label: containers first (networks can be deleted under stopped containers),
// then volumes left with its label, then networks, then the host firewall rules. Idempotent; safe
// to run on a half-built stack.
#pragma once

#include <string>
#include <vector>

#include "engine/client.h"

namespace forge::stack {

struct TeardownReport {
  int containers = 0, volumes = 0, networks = 0;
  std::vector<std::string> errors;  // what could not be removed, named
  bool clean() const { return errors.empty(); }
};

TeardownReport remove_stack(engine::Client& c, const std::string& stack);

}  // namespace forge::stack
