// The warm pool: while trials run (most of a trial's time is the model's), a few threads bring up
// the sandboxes of the trials next in line, so a trial's turn starts in a sandbox that is already
// up. Each prepared sandbox is made for one job of the queue and taken by that job's first
// attempt alone: never reused, never shared. At most `capacity` are ready or in preparation at
// once (the runner's bound: memory, subnets), and only for jobs not yet claimed (the remaining
// work). A job whose sandbox is still being prepared when its turn comes waits for it; one not
// started yet is given up to the trial, which brings up its own. shutdown() (a stop, an
// interrupt, the end) stops preparing and hands every sandbox not taken to the runner's discard.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "sweep/trial_runner.h"

namespace forge::sweep {

struct PoolStats {
  int prepared = 0;   // sandboxes made ready
  int taken = 0;      // by their trial
  int cold = 0;       // jobs whose turn came before preparation started
  int failed = 0;     // preparations that gave nothing (the trial brought up its own)
  int discarded = 0;  // ready, never taken (a stop or an interrupt)
  int peak = 0;       // most ready or in preparation at once
};

class WarmPool {
 public:
  // `jobs` in the order the workers claim them; `stopping` is polled between preparations. The
  // first `skip` jobs (the first wave, claimed at once by the workers) get no sandbox ahead: their
  // trials bring up their own at full priority, while a preparation of theirs, asking for an up
  // slot at kAhead, would wait behind every other trial of the wave and hold its worker longer.
  WarmPool(TrialRunner& runner, std::vector<const Job*> jobs, int capacity, int threads,
           std::function<bool()> stopping, std::size_t skip = 0);
  ~WarmPool();
  WarmPool(const WarmPool&) = delete;
  WarmPool& operator=(const WarmPool&) = delete;

  // Job n's turn: its prepared sandbox (waiting while it is being prepared), or null.
  std::unique_ptr<Prepared> take(std::size_t n);
  // Stops preparing, waits for preparations in progress and discards every sandbox not taken.
  void shutdown();
  PoolStats stats() const;

 private:
  enum class State { kTodo, kPreparing, kReady, kTaken, kCold };
  void prepare_loop();
  bool stopping() const { return closing_ || (stopping_ && stopping_()); }

  TrialRunner& runner_;
  std::vector<const Job*> jobs_;
  int capacity_;
  std::function<bool()> stopping_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<State> state_;
  std::vector<std::unique_ptr<Prepared>> ready_;
  std::size_t next_ = 0;  // the lowest job that may still be in State::kTodo
  int outstanding_ = 0;   // kPreparing + kReady
  bool closing_ = false;
  PoolStats stats_;
  std::vector<std::thread> threads_;
};

}  // namespace forge::sweep
