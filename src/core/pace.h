// At most so many starts a second, spaced evenly: a caller over the rate waits for its turn
// (backpressure), it never fails. `--max-up-rate` paces stack creation with it (docs/sweeps.md).
#pragma once

#include <atomic>
#include <mutex>

#include "core/clock.h"

namespace forge {

// The most a pace allows: faster than this is no pace at all.
inline constexpr double kMaxPacePerSecond = 1000;

class Pace {
 public:
  Pace() = default;
  Pace(const Pace&) = delete;
  Pace& operator=(const Pace&) = delete;

  // Starts per second; 0 (or below): no pace.
  void set_rate(double per_second);
  // Waits for this caller's turn, the turns `1/rate` apart in the order asked; false when
  // `interrupted` became > 0 while waiting (the turn is then given up).
  bool wait(const std::atomic<int>* interrupted = nullptr);

 private:
  std::mutex mu_;
  Clock::duration gap_{0};
  Clock::time_point next_{};
};

}  // namespace forge
