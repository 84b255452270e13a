// A counting gate for one kind of work a sweep's trials share (stack creation, teardown, tool
// execs, grading): at most `n` at once, the rest wait their turn in arrival order of wake-ups.
#pragma once

#include <condition_variable>
#include <mutex>

namespace forge {

class Slots {
 public:
  explicit Slots(int n = 0) : free_(n), unlimited_(n <= 0) {}  // n ≤ 0: no limit
  Slots(const Slots&) = delete;
  Slots& operator=(const Slots&) = delete;

  void acquire() {
    if (unlimited_) return;
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return free_ > 0; });
    --free_;
  }
  void release() {
    if (unlimited_) return;
    {
      std::lock_guard lock(mu_);
      ++free_;
    }
    cv_.notify_one();
  }

  // Holds one slot for its scope.
  class Hold {
   public:
    explicit Hold(Slots* s) : s_(s) {
      if (s_) s_->acquire();
    }
    ~Hold() {
      if (s_) s_->release();
    }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    Slots* s_;
  };

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int free_;
  bool unlimited_;
};

}  // namespace forge
