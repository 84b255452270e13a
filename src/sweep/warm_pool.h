// The warm pool: while trials run (most of a trial's time is the model's), a few threads run the
// first phases of the trials next in line (sandbox up, initial state in, tools open, helper
// started), so a trial's turn starts in a sandbox that is ready. Each prepared sandbox is made
// for one job of the queue and taken by that job's first attempt alone: never reused, never
// shared. At most `capacity` are ready or in preparation at once (the runner's bound: memory,
// subnets), and only for jobs not yet claimed (the remaining work). A prepared sandbox nobody is
// waiting for is frozen (its containers paused: no CPU) until its turn. A job whose turn comes
// first waits for its sandbox while the pool is working (the pool goes in queue order, so it
// reaches that job next); shutdown() (a stop, an interrupt, the end) stops preparing and hands
// every sandbox not taken to the runner's discard.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "sweep/trial_runner.h"

namespace forge::sweep {

struct PoolStats {
  int prepared = 0;   // sandboxes made ready
  int taken = 0;      // by their trial
  int cold = 0;       // jobs whose turn came before preparation started
  int failed = 0;     // preparations that gave nothing (the trial brought up its own)
  int discarded = 0;  // ready, never taken (a stop or an interrupt)
  int frozen = 0;     // paused while they waited for their turn
  int peak = 0;       // most ready or in preparation at once
};

class WarmPool {
 public:
  // `jobs` in the order the workers claim them; `stopping` is polled between preparations.
  WarmPool(TrialRunner& runner, std::vector<const Job*> jobs, int capacity, int threads,
           std::function<bool()> stopping);
  ~WarmPool();
  WarmPool(const WarmPool&) = delete;
  WarmPool& operator=(const WarmPool&) = delete;

  // Job n's turn: its prepared sandbox (waiting while it is, or is about to be, prepared), or null.
  std::unique_ptr<Prepared> take(std::size_t n);
  // Job n will not take its sandbox (its worker gave up before its first attempt): a sandbox
  // being prepared or ready for it is discarded, so it holds no place in the pool.
  void forgo(std::size_t n);
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
  static constexpr Millis kPoll{100};
  std::vector<State> state_;
  std::vector<bool> waiting_;  // a worker waits in take() for this job
  std::vector<std::unique_ptr<Prepared>> ready_;
  std::size_t next_ = 0;  // the lowest job that may still be in State::kTodo
  int outstanding_ = 0;   // kPreparing + kReady
  int running_ = 0;       // preparing threads not yet ended
  bool closing_ = false;
  PoolStats stats_;
  std::vector<std::thread> threads_;
};

}  // namespace forge::sweep
