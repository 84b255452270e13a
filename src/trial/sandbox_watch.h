// Who broke the sandbox during the agent phase. A container of the stack that stopped, was
// OOM-killed or turned unhealthy while the agent worked is the agent's own doing (its commands
// exited, crashed or exhausted their memory, or forgectl stopped the container for passing its
// disk limit) unless the daemon recorded a kill or stop from outside the trial, or the daemon
// itself failed: those are not the model's (docs/errors.md, "Who destroyed the sandbox").
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/log.h"
#include "engine/client.h"
#include "stack/up.h"
#include "stack/workspace.h"

namespace forge::trial {

struct SandboxVerdict {
  enum class Cause { kIntact, kAgent, kOutside, kDaemon } cause = Cause::kIntact;
  std::string what;  // "the runner stopped during the agent phase (exited, exit code 137)"
};

class SandboxWatch {
 public:
  // Watches every container of `up`; polls the writable layers the daemon cannot cap
  // (stack::disk_watches) every `poll` and stops a container once it passes its limit.
  SandboxWatch(engine::Client& c, const stack::UpResult& up, Logger* log, Millis poll = Millis(5000));
  ~SandboxWatch();
  SandboxWatch(const SandboxWatch&) = delete;
  SandboxWatch& operator=(const SandboxWatch&) = delete;

  // The agent phase begins; the daemon's events are read from `since` (unix seconds: the trial's
  // start, so nothing that happened to the stack before the agent phase goes unseen).
  void start(std::int64_t since);
  void stop();  // it ended; the disk poll stops
  // After stop(): what became of the sandbox, read from the containers' state and the daemon's
  // events between start() and now. `suspect` (a tool call failed): the daemon may not yet show a
  // container that just died as stopped, so its state is read again for a moment before it counts
  // as intact.
  SandboxVerdict verdict(bool suspect = false);

 private:
  void poll_disks();
  SandboxVerdict read_verdict();
  // Containers forgectl itself stopped (their kill/stop events are not from outside).
  bool stopped_by_us(const std::string& id);

  engine::Client& c_;
  const stack::UpResult& up_;
  Logger* log_;
  Millis poll_;
  std::vector<stack::DiskWatch> watches_;
  std::int64_t since_ = 0;  // unix seconds
  std::atomic<bool> running_{false};
  std::thread poller_;
  std::mutex mu_;
  std::set<std::string> ours_;  // container ids forgectl stopped
  std::string disk_reason_;     // why forgectl stopped one, for the verdict
};

}  // namespace forge::trial
