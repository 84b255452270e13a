// Monotonic deadlines: every call that can block takes one.
#pragma once

#include <chrono>

namespace forge {

using Clock = std::chrono::steady_clock;
using Millis = std::chrono::milliseconds;

class Deadline {
 public:
  static Deadline in(Millis d) { return Deadline(Clock::now() + d); }
  static Deadline never() { return Deadline(Clock::time_point::max()); }
  explicit Deadline(Clock::time_point at) : at_(at) {}

  bool is_never() const { return at_ == Clock::time_point::max(); }
  bool expired() const { return !is_never() && Clock::now() >= at_; }
  // Time left, never negative; a large value for never().
  Millis remaining() const {
    if (is_never()) return Millis(24L * 3600 * 1000);
    auto left = std::chrono::duration_cast<Millis>(at_ - Clock::now());
    return left.count() > 0 ? left : Millis(0);
  }
  Clock::time_point at() const { return at_; }
  Deadline earlier(Deadline other) const { return at_ < other.at_ ? *this : other; }

 private:
  Clock::time_point at_;
};

inline Millis elapsed_since(Clock::time_point start) {
  return std::chrono::duration_cast<Millis>(Clock::now() - start);
}

}  // namespace forge
