// Teardown off the critical path: a finished trial hands its stack here and is done; removals run
// on a few worker threads of their own, each under the sweep's teardown admission (Slots), and
// drain() waits for every one of them (the leak audit drains first, so it still holds at the end
// of a run). A process killed before its removals ran leaves attached stacks of a dead owner:
// orphans, which `forgectl down --orphans` and the next run's preparation reap (inventory.h).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/log.h"
#include "core/slots.h"
#include "engine/client.h"

namespace forge::stack {

class BackgroundTeardown {
 public:
  // At most `workers` threads (started as work arrives), each removal holding one of `gate`'s slots
  // (null: none). Warnings for what could not be removed go to `log` (may be null).
  BackgroundTeardown(Slots* gate, int workers, Logger* log);
  ~BackgroundTeardown();  // drains
  BackgroundTeardown(const BackgroundTeardown&) = delete;
  BackgroundTeardown& operator=(const BackgroundTeardown&) = delete;

  // Any work (the unit tests' fakes); it must not throw.
  void submit(std::function<void()> work);
  // remove_stack(c, stack) with a warning naming `who` when it was not clean. `c` must outlive drain().
  void submit_stack(engine::Client& c, const std::string& stack, const std::string& who);
  // Returns once every submitted removal has ended.
  void drain();
  int pending() const;     // queued or running
  int peak_running() const;

 private:
  void work();

  Slots* gate_;
  int max_workers_;
  Logger* log_;
  mutable std::mutex mu_;
  std::condition_variable cv_, idle_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> threads_;
  int idle_workers_ = 0, running_ = 0, peak_ = 0;
  bool closing_ = false;
};

}  // namespace forge::stack
