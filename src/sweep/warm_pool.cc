// The warm pool.
#include "sweep/warm_pool.h"

#include <algorithm>

namespace forge::sweep {

WarmPool::WarmPool(TrialRunner& runner, std::vector<const Job*> jobs, int capacity, int threads,
                   std::function<bool()> stopping)
    : runner_(runner),
      jobs_(std::move(jobs)),
      capacity_(std::max(0, capacity)),
      stopping_(std::move(stopping)),
      state_(jobs_.size(), State::kTodo),
      waiting_(jobs_.size(), false),
      ready_(jobs_.size()) {
  int n = std::min({threads, capacity_, static_cast<int>(jobs_.size() - next_)});
  std::lock_guard lock(mu_);  // take() reads threads_ and running_
  running_ = n;
  for (int i = 0; i < n; ++i)
    threads_.emplace_back([this] {
      prepare_loop();
      std::lock_guard l(mu_);
      --running_;
      cv_.notify_all();
    });
}

WarmPool::~WarmPool() { shutdown(); }

void WarmPool::prepare_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    // The next job nobody claimed or prepares, while the pool has room.
    // Timed: a stop of the run (stopping_) is polled, not notified.
    cv_.wait_for(lock, kPoll, [&] { return stopping() || outstanding_ < capacity_ || next_ >= state_.size(); });
    if (stopping()) return;
    while (next_ < state_.size() && state_[next_] != State::kTodo) ++next_;
    if (next_ >= state_.size()) return;
    if (outstanding_ >= capacity_) continue;
    std::size_t n = next_++;
    state_[n] = State::kPreparing;
    ++outstanding_;
    stats_.peak = std::max(stats_.peak, outstanding_);
    lock.unlock();
    std::unique_ptr<Prepared> p = runner_.prepare(*jobs_[n]);
    lock.lock();
    // Paused while nobody waits for it: an idle sandbox costs no CPU until its turn.
    if (p && !waiting_[n] && !stopping()) {
      lock.unlock();
      bool frozen = runner_.freeze(*p);
      lock.lock();
      if (frozen) ++stats_.frozen;
    }
    if (p) {
      ++stats_.prepared;
      ready_[n] = std::move(p);
      state_[n] = State::kReady;
    } else {
      ++stats_.failed;
      --outstanding_;
      state_[n] = State::kCold;
    }
    cv_.notify_all();
  }
}

std::unique_ptr<Prepared> WarmPool::take(std::size_t n) {
  std::unique_lock lock(mu_);
  if (n >= state_.size()) return nullptr;
  // Its turn came before its preparation: it waits while the pool works in queue order and
  // will reach it (every job before it is claimed, so every sandbox held is about to be taken);
  // a pool that stopped or has no threads leaves the trial to bring up its own.
  waiting_[n] = true;
  auto settled = [&] {
    bool todo_but_idle = state_[n] == State::kTodo && (threads_.empty() || stopping() || running_ == 0);
    return todo_but_idle || (state_[n] != State::kTodo && state_[n] != State::kPreparing);
  };
  while (!settled()) cv_.wait_for(lock, kPoll);
  waiting_[n] = false;
  if (state_[n] == State::kTodo) {
    state_[n] = State::kCold;
    ++stats_.cold;
    return nullptr;
  }
  if (state_[n] != State::kReady) return nullptr;
  state_[n] = State::kTaken;
  --outstanding_;
  ++stats_.taken;
  cv_.notify_all();  // room for the next preparation
  return std::move(ready_[n]);
}

void WarmPool::forgo(std::size_t n) {
  std::unique_ptr<Prepared> p;
  {
    std::unique_lock lock(mu_);
    if (n >= state_.size()) return;
    if (state_[n] == State::kTodo) {
      state_[n] = State::kCold;
      return;
    }
    waiting_[n] = true;  // not frozen on the way out
    while (state_[n] == State::kPreparing) cv_.wait_for(lock, kPoll);
    waiting_[n] = false;
    if (state_[n] != State::kReady) return;
    p = std::move(ready_[n]);
    state_[n] = State::kCold;
    --outstanding_;
    ++stats_.discarded;
  }
  cv_.notify_all();
  runner_.discard(std::move(p));
}

void WarmPool::shutdown() {
  {
    std::lock_guard lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
  std::vector<std::unique_ptr<Prepared>> left;
  {
    std::lock_guard lock(mu_);
    for (std::size_t n = 0; n < state_.size(); ++n)
      if (state_[n] == State::kReady) {
        left.push_back(std::move(ready_[n]));
        state_[n] = State::kCold;
        --outstanding_;
        ++stats_.discarded;
      }
  }
  for (auto& p : left) runner_.discard(std::move(p));
}

PoolStats WarmPool::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace forge::sweep
