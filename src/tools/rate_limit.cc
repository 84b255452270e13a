// Per-trial tool rate limits.
#include "tools/rate_limit.h"

#include <utility>

namespace forge::tools {

RateLimiter::RateLimiter(Now now) : now_(now ? std::move(now) : Now([] { return Clock::now(); })) {}

Status RateLimiter::acquire(std::string_view tool, const ToolPolicy& policy) {
  auto it = counters_.find(tool);
  if (it == counters_.end()) it = counters_.emplace(std::string(tool), Counter{}).first;
  Counter& c = it->second;
  const std::string name(tool);

  if (policy.rate_limit > 0 && c.total >= policy.rate_limit)
    return fail(Errc::kForbidden,
                "rate limit for '" + name + "' reached (" + std::to_string(policy.rate_limit) + " calls per trial)");
  const Clock::time_point now = now_();
  // A call exactly one window old no longer counts.
  while (!c.recent.empty() && now - c.recent.front() >= kRateWindow) c.recent.pop_front();
  if (policy.rate_per_minute > 0 && static_cast<int>(c.recent.size()) >= policy.rate_per_minute)
    return fail(Errc::kForbidden, "rate limit for '" + name + "' reached (" + std::to_string(policy.rate_per_minute) +
                                      " calls per minute)");
  ++c.total;
  // Without a per-minute limit the window is never consulted: keep it empty.
  if (policy.rate_per_minute > 0) c.recent.push_back(now);
  return {};
}

int RateLimiter::calls(std::string_view tool) const {
  auto it = counters_.find(tool);
  return it == counters_.end() ? 0 : it->second.total;
}

void RateLimiter::reset() { counters_.clear(); }

}  // namespace forge::tools
