// Exec endpoints and exec_run: a command in a running container, with stdin, output caps and a
// deadline that really stops the process inside the container.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/client.h"

namespace forge::engine {

struct ExecCreateSpec {
  std::vector<std::string> cmd;
  std::vector<std::string> env;  // "K=V"
  std::string user;              // numeric "uid:gid" works in images without /etc/passwd
  std::string workdir;
  bool attach_stdin = false;
};
Result<std::string> exec_create(Client& c, std::string_view container, const ExecCreateSpec& spec);
std::string exec_create_body(const ExecCreateSpec& spec);
// Starts the exec on its own (hijacked) connection: stdout/stderr frames until the exec ends.
Result<std::unique_ptr<Stream>> exec_start(Client& c, std::string_view exec_id);

struct ExecInspect {
  bool running = false;
  std::optional<int> exit_code;  // unset while running
  int pid = 0;                   // on the daemon's host
  std::string container_id;
};
Result<ExecInspect> exec_inspect(Client& c, std::string_view exec_id);

// The static helper forgectl places in its images (src/helper): runs the command in its own
// process group under a deadline and kills the whole group (and escapees, by token) at expiry.
inline constexpr const char* kExecHelperPath = "/.forgectl/exec";
inline constexpr int kHelperTimeoutExit = 124;

// The helper's `--as U:G` for an exec user: for a numeric "uid:gid" with neither 0, so the
// helper (started as that user already) verifies it holds no capability and cannot regain
// root before it runs anything (docs/helper-protocol.md). Empty for root, a name, or "".
std::vector<std::string> helper_as_args(std::string_view user);

struct ExecOptions {
  std::vector<std::string> cmd;
  std::vector<std::string> env;
  std::string user, workdir;
  std::optional<std::string> stdin_data;  // unset: stdin not attached
  Millis timeout{0};                       // 0: none
  std::size_t output_cap = 8u << 20;       // per stream; the rest is read and dropped
  std::string helper;                      // the helper's path in the container; empty: none there
  // Non-zero stops the command as a timeout would (within ~200 ms) and sets `cancelled`: a SIGINT
  // must not wait out a test script's deadline. Null: never.
  const std::atomic<int>* cancel = nullptr;
};

struct ExecResult {
  int exit_code = -1;  // -1 when the daemon could not tell (killed and gone)
  std::string out, err;
  bool out_truncated = false, err_truncated = false;
  bool timed_out = false;
  bool cancelled = false;  // stopped through ExecOptions::cancel (timed_out is set too)
  Millis elapsed{0};
  std::string kill_method;  // how a timed-out exec was stopped: "helper", "host-session", "helper-token", ""
};

// Runs a command to completion. On timeout the process group inside the container is killed
// (by the helper when present; else by signalling the exec's session from the host when the
// daemon is local; else by a second exec of the helper's --kill-token, as the same user: only
// that uid may signal the command's processes) and `timed_out` is set. The token is on the
// helper's command line: a non-dumpable helper's environment cannot be read.
// A command that could not start at all (missing binary, unknown user) is an error, not a result.
Result<ExecResult> exec_run(Client& c, std::string_view container, const ExecOptions& opts);

}  // namespace forge::engine
