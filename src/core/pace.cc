#include "core/pace.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace forge {

void Pace::set_rate(double per_second) {
  std::lock_guard lock(mu_);
  if (per_second <= 0) {
    gap_ = Clock::duration(0);
    return;
  }
  per_second = std::min(per_second, kMaxPacePerSecond);
  gap_ = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / per_second));
}

bool Pace::wait(const std::atomic<int>* interrupted) {
  Clock::time_point turn;
  {
    std::lock_guard lock(mu_);
    if (gap_ == Clock::duration(0)) return true;
    turn = std::max(Clock::now(), next_);
    next_ = turn + gap_;
  }
  // Short sleeps, so an interrupt is seen within 50 ms.
  while (Clock::now() < turn) {
    if (interrupted && interrupted->load() > 0) return false;
    std::this_thread::sleep_for(std::min<Clock::duration>(turn - Clock::now(), Millis(50)));
  }
  return true;
}

}  // namespace forge
