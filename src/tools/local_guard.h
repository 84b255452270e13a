// The local executor's safety rails: it runs commands on the host, so it is used only when asked
// for, says so loudly once per process, and FORGECTL_REQUIRE_CONTAINER=1 turns its shell off.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "core/log.h"
#include "tools/sandbox.h"

namespace forge::tools {

// Once per process, and only when a command is about to run on the host.
class LocalWarning {
 public:
  explicit LocalWarning(Logger* log) : log_(log) {}
  void before_first_command(const std::string& where);

 private:
  Logger* log_;
  std::once_flag once_;
};

// Wraps a host sandbox: commands are refused when FORGECTL_REQUIRE_CONTAINER=1 (read at each
// call, so a sweep can be locked down without restarting tools), and warned about once.
std::shared_ptr<Sandbox> guard_local(std::shared_ptr<Sandbox> host, std::shared_ptr<LocalWarning> warning);

}  // namespace forge::tools
