// Per-trial rate limits for tool calls: a total per tool and a sliding one-minute window.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/result.h"
#include "tools/tool.h"

namespace forge::tools {

inline constexpr Millis kRateWindow{60000};

// Counts the calls of one trial. Not synchronised: ToolExecutor calls it under its own lock.
class RateLimiter {
 public:
  using Now = std::function<Clock::time_point()>;

  // `now` is injectable for tests; empty means Clock::now.
  explicit RateLimiter(Now now = {});

  // Records a call of `tool` if `policy` allows one more; otherwise Errc::kForbidden with the
  // reason the model sees, "rate limit for 'bash' reached (5 calls per trial)" or
  // "(20 calls per minute)". A refused call is not recorded, so it uses up nothing.
  Status acquire(std::string_view tool, const ToolPolicy& policy);

  int calls(std::string_view tool) const;  // recorded calls of `tool` in this trial
  void reset();                            // a new trial

 private:
  struct Counter {
    int total = 0;
    std::deque<Clock::time_point> recent;  // calls within the last kRateWindow, oldest first
  };
  Now now_;
  std::map<std::string, Counter, std::less<>> counters_;
};

}  // namespace forge::tools
