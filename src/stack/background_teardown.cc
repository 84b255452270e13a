// Background stack removal.
#include "stack/background_teardown.h"

#include <algorithm>

#include "stack/teardown.h"

namespace forge::stack {

BackgroundTeardown::BackgroundTeardown(Slots* gate, int workers, Logger* log)
    : gate_(gate), max_workers_(std::max(1, workers)), log_(log) {}

BackgroundTeardown::~BackgroundTeardown() {
  drain();
  {
    std::lock_guard lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void BackgroundTeardown::submit(std::function<void()> work) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(work));
    // A thread only when none is idle and the bound allows: removals are few and short.
    if (idle_workers_ == 0 && static_cast<int>(threads_.size()) < max_workers_)
      threads_.emplace_back([this] { this->work(); });
  }
  cv_.notify_one();
}

void BackgroundTeardown::submit_stack(engine::Client& c, const std::string& stack, const std::string& who) {
  submit([this, &c, stack, who] {
    auto rep = remove_stack(c, stack);
    if (!rep.clean() && log_) log_->warn(who + ": teardown: " + rep.errors.front());
  });
}

void BackgroundTeardown::work() {
  std::unique_lock lock(mu_);
  for (;;) {
    ++idle_workers_;
    cv_.wait(lock, [&] { return closing_ || !queue_.empty(); });
    --idle_workers_;
    if (queue_.empty()) return;  // closing
    auto job = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    peak_ = std::max(peak_, running_);
    lock.unlock();
    {
      Slots::Hold hold(gate_);
      job();
    }
    lock.lock();
    --running_;
    if (queue_.empty() && running_ == 0) idle_.notify_all();
  }
}

void BackgroundTeardown::drain() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [&] { return queue_.empty() && running_ == 0; });
}

int BackgroundTeardown::pending() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(queue_.size()) + running_;
}

int BackgroundTeardown::peak_running() const {
  std::lock_guard lock(mu_);
  return peak_;
}

}  // namespace forge::stack
