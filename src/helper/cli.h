// forgectl-exec's command line: which mode, and its options, checked before anything runs.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "helper/privdrop.h"

namespace forge::helper {

// Exit codes of the helper itself (the command's own pass through): as timeout(1) and env(1).
inline constexpr int kExitTimeout = 124;
inline constexpr int kExitFailed = 125;  // usage, a refused request, a privilege drop that did not take
inline constexpr int kExitNotExecutable = 126;
inline constexpr int kExitNotFound = 127;

inline constexpr long long kMaxTimeoutMs = 1LL << 40;  // ~35 years; keeps nanosecond arithmetic far from overflow
inline constexpr int kDefaultMaxChildren = 64;
inline constexpr int kMaxMaxChildren = 1024;

extern const char kUsage[];

enum class Mode { kRun, kVersion, kKillToken, kKillAll, kServe, kAsAgentServer, kAsAgent };

struct CommandLine {
  Mode mode = Mode::kRun;
  long long timeout_ms = 0;  // run, as-agent, as-agent-server; 0 = none
  std::string token;         // --token (run, serve)
  std::string kill_token;    // --kill-token
  std::string root;          // --serve --root
  std::string socket;        // --as-agent-server / --as-agent
  std::string cwd;           // --as-agent --cwd; empty: the client's own
  bool drop = false;         // --as given
  DropSpec as;               // --as, --groups
  bool has_allow_uid = false;
  uid_t allow_uid = 0;  // --allow-uid
  int max_children = kDefaultMaxChildren;
  std::vector<std::string> cmd;  // after "--"
};

// `args` without argv[0]. False, with `*error` naming the argument, on anything not allowed:
// unknown or repeated options, options of another mode, missing values or command, bad numbers.
bool parse_command_line(const std::vector<std::string>& args, CommandLine* out, std::string* error);

}  // namespace forge::helper
