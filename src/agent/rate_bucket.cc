// Token bucket with reservations, and the per-provider registry.
#include "agent/rate_bucket.h"

#include <algorithm>
#include <cmath>
#include <thread>

namespace forge::agent {

RateBucket::RateBucket(RateLimit limit, Now now, Sleep sleep)
    : limit_{std::max(limit.per_second, 1e-6), std::max(limit.burst, 1.0)},
      now_(now ? std::move(now) : Now([] { return Clock::now(); })),
      sleep_(sleep ? std::move(sleep) : Sleep([](Millis d) { std::this_thread::sleep_for(d); })),
      tokens_(limit_.burst),
      last_(now_()) {}

void RateBucket::refill(Clock::time_point now) {
  double earned = std::chrono::duration<double>(now - last_).count() * limit_.per_second;
  if (earned > 0) {
    tokens_ = std::min(limit_.burst, tokens_ + earned);
    last_ = now;
  }
}

bool RateBucket::try_acquire() {
  std::lock_guard lock(mu_);
  refill(now_());
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

Status RateBucket::acquire(Deadline deadline) {
  Millis wait{0};
  {
    std::lock_guard lock(mu_);
    refill(now_());
    tokens_ -= 1;
    if (tokens_ < 0) {
      wait = Millis(static_cast<std::int64_t>(std::ceil(-tokens_ / limit_.per_second * 1000)));
      if (!deadline.is_never() && wait > deadline.remaining()) {
        tokens_ += 1;  // give the reservation back: this caller will not use it
        return fail(Errc::kTimeout, "request rate limit: the next slot is " + std::to_string(wait.count()) +
                                        " ms away, past the deadline");
      }
    }
  }
  if (wait.count() > 0) sleep_(wait);
  return {};
}

RateBucketRegistry::RateBucketRegistry(std::optional<RateLimit> default_limit, RateBucket::Now now,
                                       RateBucket::Sleep sleep)
    : default_(default_limit), now_(std::move(now)), sleep_(std::move(sleep)) {}

RateLimit RateBucketRegistry::per_second(double rps) { return RateLimit{rps, std::max(1.0, std::floor(rps))}; }

void RateBucketRegistry::set_limit(const std::string& key, RateLimit limit) {
  std::lock_guard lock(mu_);
  limits_[key] = limit;
}

RateBucket* RateBucketRegistry::bucket(const std::string& key) {
  std::lock_guard lock(mu_);
  if (auto it = buckets_.find(key); it != buckets_.end()) return it->second.get();
  std::optional<RateLimit> limit = default_;
  if (auto it = limits_.find(key); it != limits_.end()) limit = it->second;
  if (!limit) return nullptr;
  auto& slot = buckets_[key];
  slot = std::make_unique<RateBucket>(*limit, now_, sleep_);
  return slot.get();
}

}  // namespace forge::agent
