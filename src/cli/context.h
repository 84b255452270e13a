// What every verb gets from main(): output streams, the logger, and the daemon connection.
#pragma once

#include <atomic>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "core/host_settings.h"
#include "core/log.h"
#include "engine/client.h"
#include "engine/docker_host.h"

namespace forge::cli {

// Exit codes (docs/errors.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInterrupted = 130;

class Context {
 public:
  // `host` is read from the environment once, in main(); nothing below the CLI reads it again.
  Context(std::ostream& out, std::ostream& err, HostSettings host)
      : out(out), err(err), host(std::move(host)), log(err, Logger::parse_level(this->host.log_level, LogLevel::kInfo)) {}
  std::ostream& out;
  std::ostream& err;
  const HostSettings host;
  Logger log;
  std::string host_flag;  // -H/--host; empty = DOCKER_HOST or the default socket
  // argv as given: CLI11 hands a verb the words after `--` as more positionals, so a verb that
  // passes them on (`slurm submit … -- SBATCH_ARGS`) finds where they start here.
  std::vector<std::string> command_line;
  // SIGINT/SIGTERM received so far (counted by main's signal thread): 1 = stop and clean up,
  // 2+ = hurry, but still clean up.
  std::atomic<int> interrupted{0};
  // Set by verbs that poll `interrupted` and clean up; for the others a signal ends the process.
  std::atomic<bool> handles_interrupts{false};

  // Connects on first use (verbs that need no daemon never do).
  Result<engine::Client*> client();
  Result<engine::DockerHost> docker_host() const;

  // Prints "forgectl: error: …" and returns kExitFailure (kExitUsage for kInvalid).
  int report(const Error& e);

 private:
  std::unique_ptr<engine::Client> client_;
};

}  // namespace forge::cli
