// Token buckets: burst then rate, deadlines, sharing across threads, the registry.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "agent/rate_bucket.h"

using namespace forge;
using namespace forge::agent;
using std::chrono::milliseconds;

namespace {

// A clock that only sleeping moves.
struct FakeTime {
  Clock::time_point now = Clock::now();
  milliseconds slept{0};
  RateBucket make(RateLimit limit) {
    return RateBucket(limit, [this] { return now; }, [this](milliseconds d) {
      now += d;
      slept += d;
    });
  }
};

}  // namespace

TEST_CASE("llm rate bucket: a burst at once, then the rate") {
  FakeTime t;
  auto b = t.make(RateLimit{10, 5});
  for (int i = 0; i < 5; ++i) REQUIRE(b.acquire(Deadline::never()));
  CHECK(t.slept == milliseconds(0));
  for (int i = 0; i < 20; ++i) REQUIRE(b.acquire(Deadline::never()));
  CHECK(t.slept == milliseconds(2000));  // 20 more at 10 per second

  t.now += std::chrono::seconds(60);  // a quiet minute refills the burst, not more
  for (int i = 0; i < 5; ++i) CHECK(b.try_acquire());
  CHECK_FALSE(b.try_acquire());
}

TEST_CASE("llm rate bucket: a wait past the deadline fails at once and costs no token") {
  FakeTime t;
  auto b = t.make(RateLimit{1, 1});
  REQUIRE(b.acquire(Deadline::never()));
  auto late = b.acquire(Deadline::in(milliseconds(200)));
  REQUIRE_FALSE(late);
  CHECK(late.error().code == Errc::kTimeout);
  CHECK(t.slept == milliseconds(0));
  REQUIRE(b.acquire(Deadline::never()));  // the refused reservation was given back: one second, not two
  CHECK(t.slept == milliseconds(1000));
}

TEST_CASE("llm rate bucket: threads sharing a bucket get the rate between them (real clock)") {
  RateBucket b(RateLimit{50, 1});
  auto start = Clock::now();
  std::vector<std::thread> threads;
  std::atomic<int> done{0};
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      for (int k = 0; k < 5; ++k)
        if (b.acquire(Deadline::never())) ++done;
    });
  for (auto& th : threads) th.join();
  CHECK(done == 20);
  // 1 at once, then 19 at 50/s: at least 380 ms whatever the interleaving.
  CHECK(elapsed_since(start) >= milliseconds(370));
}

TEST_CASE("llm rate bucket: the registry gives one bucket per key, or none without a limit") {
  RateBucketRegistry unlimited;
  CHECK(unlimited.bucket("openai https://api.openai.com/v1") == nullptr);

  RateBucketRegistry r(RateBucketRegistry::per_second(3));
  RateBucket* a = r.bucket("openai https://api.openai.com/v1");
  REQUIRE(a);
  CHECK(a == r.bucket("openai https://api.openai.com/v1"));
  CHECK(a != r.bucket("anthropic https://api.anthropic.com/v1"));
  CHECK(a->limit().burst == 3);
  r.set_limit("vllm http://gpu:8000/v1", RateLimit{100, 20});
  CHECK(r.bucket("vllm http://gpu:8000/v1")->limit().per_second == 100);
  CHECK(RateBucketRegistry::per_second(0.5).burst == 1);
}
