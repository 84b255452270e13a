// The warm pool.
#include "sweep/warm_pool.h"

#include <algorithm>

namespace forge::sweep {

WarmPool::WarmPool(TrialRunner& runner, std::vector<const Job*> jobs, int capacity, int threads,
                   std::function<bool()> stopping, std::size_t skip)
    : runner_(runner),
      jobs_(std::move(jobs)),
      capacity_(std::max(0, capacity)),
      stopping_(std::move(stopping)),
      state_(jobs_.size(), State::kTodo),
      ready_(jobs_.size()),
      next_(std::min(skip, jobs_.size())) {
  int n = std::min({threads, capacity_, static_cast<int>(jobs_.size() - next_)});
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { prepare_loop(); });
}

WarmPool::~WarmPool() { shutdown(); }

void WarmPool::prepare_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    // The next job nobody claimed or prepares, while the pool has room.
    cv_.wait(lock, [&] { return stopping() || outstanding_ < capacity_ || next_ >= state_.size(); });
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
  if (state_[n] == State::kTodo) {  // its turn came first: the trial brings up its own
    state_[n] = State::kCold;
    ++stats_.cold;
    return nullptr;
  }
  cv_.wait(lock, [&] { return state_[n] != State::kPreparing; });
  if (state_[n] != State::kReady) return nullptr;
  state_[n] = State::kTaken;
  --outstanding_;
  ++stats_.taken;
  cv_.notify_all();  // room for the next preparation
  return std::move(ready_[n]);
}

void WarmPool::shutdown() {
  {
    std::lock_guard lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
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
