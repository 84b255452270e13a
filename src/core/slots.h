// A counting gate for one kind of work a sweep's trials share (stack creation, teardown, tool
// execs, grading): at most `limit` at once, the rest wait their turn. The limit is fixed, or
// adaptive: it grows while the work's latency stays near the best seen and shrinks when it
// climbs (what the daemon sustains, measured rather than guessed). Work done ahead of need (the
// warm pool) asks at a lower priority and gets a slot only when no trial is waiting for one.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "core/clock.h"

namespace forge {

// The adaptive rule's bounds. A window of `limit` completions whose smoothed latency stays under
// grow_below × the best seen while work waited adds one slot; a smoothed latency over
// shrink_above × the best takes a quarter away (at least one), then as many completions pass
// before the next change, so one slow burst is not counted twice.
struct AdaptiveLimit {
  int initial = 4, min = 2, max = 32;
  double grow_below = 1.5, shrink_above = 2.5;
};

class Slots {
 public:
  enum class Priority { kNow, kAhead };  // kAhead: only while no kNow waiter is queued

  explicit Slots(int n = 0) : limit_(n), unlimited_(n <= 0) {}  // n ≤ 0: no limit
  explicit Slots(const AdaptiveLimit& a)
      : limit_(std::clamp(a.initial, std::max(1, a.min), std::max(a.min, a.max))), adaptive_(true), rule_(a) {
    rule_.min = std::max(1, rule_.min);
    rule_.max = std::max(rule_.min, rule_.max);
    peak_ = limit_;
  }
  Slots(const Slots&) = delete;
  Slots& operator=(const Slots&) = delete;

  void acquire(Priority p = Priority::kNow) {
    if (unlimited_) return;
    std::unique_lock lock(mu_);
    bool now = p == Priority::kNow;
    if (now) ++waiting_now_;
    if (in_use_ >= limit_) waited_ = true;
    cv_.wait(lock, [&] { return in_use_ < limit_ && (now || waiting_now_ == 0); });
    if (now) --waiting_now_;
    ++in_use_;
  }
  void release() { release_sample(std::nullopt); }
  // Releases one slot and, for an adaptive limit, counts how long the work took.
  void release(Millis took) { release_sample(took); }

  int limit() const {
    std::lock_guard lock(mu_);
    return limit_;
  }
  int in_use() const {
    std::lock_guard lock(mu_);
    return in_use_;
  }
  int peak_limit() const {
    std::lock_guard lock(mu_);
    return peak_;
  }
  bool adaptive() const { return adaptive_; }
  bool unlimited() const { return unlimited_; }

  // Holds one slot for its scope; an adaptive gate learns from how long the scope took.
  class Hold {
   public:
    explicit Hold(Slots* s, Priority p = Priority::kNow) : s_(s) {
      if (s_) s_->acquire(p);
      start_ = Clock::now();
    }
    ~Hold() {
      if (s_) s_->release(elapsed_since(start_));
    }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    Slots* s_;
    Clock::time_point start_;
  };

 private:
  void release_sample(std::optional<Millis> took) {
    if (unlimited_) return;
    {
      std::lock_guard lock(mu_);
      --in_use_;
      if (adaptive_ && took) observe(static_cast<double>(took->count()));
    }
    cv_.notify_all();  // a raised limit may admit more than one; kAhead waiters recheck
  }

  // Under mu_.
  void observe(double ms) {
    ms = std::max(ms, 1.0);
    if (best_ == 0 || ms < best_) best_ = ms;
    else best_ *= 1.005;  // the best drifts up slowly: an old lucky sample fades
    smooth_ = smooth_ == 0 ? ms : 0.7 * smooth_ + 0.3 * ms;
    if (cooldown_ > 0) {
      --cooldown_;
      return;
    }
    double ratio = smooth_ / best_;
    if (ratio > rule_.shrink_above && limit_ > rule_.min) {
      limit_ = std::max(rule_.min, limit_ - std::max(1, limit_ / 4));
      cooldown_ = limit_;
      good_ = 0;
      waited_ = false;
      return;
    }
    if (ratio < rule_.grow_below) {
      if (++good_ >= limit_) {
        if (waited_ && limit_ < rule_.max) {
          ++limit_;
          peak_ = std::max(peak_, limit_);
        }
        good_ = 0;
        waited_ = false;
      }
    } else {
      good_ = 0;
    }
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  int limit_;
  int in_use_ = 0;
  int waiting_now_ = 0;
  bool unlimited_ = false;
  bool adaptive_ = false;
  AdaptiveLimit rule_;
  // The adaptive rule's state: the best latency seen, the smoothed latency, completions since the
  // last change, completions to skip after a shrink, and whether work waited in this window.
  double best_ = 0, smooth_ = 0;
  int good_ = 0, cooldown_ = 0;
  bool waited_ = false;
  int peak_ = 0;
};

}  // namespace forge
