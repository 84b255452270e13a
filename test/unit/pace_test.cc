// --max-up-rate's pace (core/pace.h): turns spaced 1/rate apart in the order asked, an
// interrupt ends a wait, no rate no wait.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "core/pace.h"

using namespace forge;

TEST_CASE("pace: 5 starts at 20 a second from 5 threads take at least 4 gaps; none without a rate") {
  Pace p;
  auto t0 = Clock::now();
  for (int i = 0; i < 5; ++i) CHECK(p.wait());
  CHECK(elapsed_since(t0) < Millis(50));
  p.set_rate(20);
  t0 = Clock::now();
  std::vector<std::thread> ts;
  for (int i = 0; i < 5; ++i) ts.emplace_back([&] { CHECK(p.wait()); });
  for (auto& t : ts) t.join();
  CHECK(elapsed_since(t0) >= Millis(195));
  CHECK(elapsed_since(t0) < Millis(2000));
}

TEST_CASE("pace: an interrupt ends a wait for a far turn") {
  Pace p;
  p.set_rate(0.01);  // a turn every 100 s
  CHECK(p.wait());
  std::atomic<int> interrupted{0};
  std::thread stop([&] {
    std::this_thread::sleep_for(Millis(100));
    interrupted = 1;
  });
  auto t0 = Clock::now();
  CHECK_FALSE(p.wait(&interrupted));
  CHECK(elapsed_since(t0) < Millis(2000));
  stop.join();
}
