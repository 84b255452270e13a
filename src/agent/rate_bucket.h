// Token buckets that pace LLM requests per provider, shared by all trials of a process.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/clock.h"
#include "core/result.h"

namespace forge::agent {

struct RateLimit {
  double per_second = 1;  // sustained rate, > 0
  double burst = 1;       // tokens available at once, >= 1
};

// A token bucket: `burst` requests at once, then `per_second` on average. Unlike Tolokaforge's
// minimum-interval limiter it lets a quiet period be spent as a burst.
// acquire() reserves a token and then sleeps outside the lock until its turn, so waiters are
// served in arrival order and a waiter never holds up the others' bookkeeping.
class RateBucket {
 public:
  using Now = std::function<Clock::time_point()>;
  using Sleep = std::function<void(Millis)>;

  // `now` and `sleep` are injectable for tests; empty means the steady clock and a real sleep.
  explicit RateBucket(RateLimit limit, Now now = {}, Sleep sleep = {});

  // Blocks until a token is available. kTimeout, without waiting and without using a token,
  // when the wait would end after `deadline`.
  Status acquire(Deadline deadline);
  // Takes a token only if one is available now.
  bool try_acquire();

  RateLimit limit() const { return limit_; }

 private:
  // Adds the tokens earned since the last call; under mu_.
  void refill(Clock::time_point now);

  RateLimit limit_;
  Now now_;
  Sleep sleep_;
  std::mutex mu_;
  double tokens_;  // negative while callers wait on reservations
  Clock::time_point last_;
};

// One bucket per key ("provider base_url"), created on first use with the default limit or a
// limit set for that key. No limit at all means bucket() returns nullptr and nothing is paced.
// Owned by main() (or a test) and passed down; bucket pointers stay valid for its lifetime.
class RateBucketRegistry {
 public:
  explicit RateBucketRegistry(std::optional<RateLimit> default_limit = std::nullopt, RateBucket::Now now = {},
                              RateBucket::Sleep sleep = {});
  // A limit for `per_second` requests per second with a burst of one second's worth (at least 1):
  // what run config's max_requests_per_second means.
  static RateLimit per_second(double rps);

  void set_limit(const std::string& key, RateLimit limit);  // before the first bucket(key)
  RateBucket* bucket(const std::string& key);

 private:
  std::optional<RateLimit> default_;
  RateBucket::Now now_;
  RateBucket::Sleep sleep_;
  std::mutex mu_;
  std::map<std::string, RateLimit> limits_;
  std::map<std::string, std::unique_ptr<RateBucket>> buckets_;
};

}  // namespace forge::agent
