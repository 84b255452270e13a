// The sweep's admission: an adaptive Slots gate grows while the work's latency stays flat and
// shrinks when it climbs, work done ahead waits for trials that need a slot now, and the
// background teardown runs removals under the gate and drains them all.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "core/slots.h"
#include "stack/background_teardown.h"

using namespace forge;

namespace {

// `n` holds, each reported as taking `ms`,, from `threads` threads that keep the gate busy.
void load(Slots& s, int threads, int n, int ms) {
  std::atomic<int> left{n};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&] {
      while (left.fetch_sub(1) > 0) {
        s.acquire();
        std::this_thread::sleep_for(std::chrono::microseconds(500));  // held for real, so work queues
        s.release(Millis(ms));  // …and reported as taking `ms`
      }
    });
  for (auto& t : ts) t.join();
}

}  // namespace

TEST_CASE("adaptive slots: a flat latency with work waiting raises the limit, one step per window") {
  Slots s(AdaptiveLimit{4, 2, 12});
  CHECK(s.limit() == 4);
  load(s, 16, 400, 100);  // every op as fast as the best: the daemon keeps up
  CHECK(s.limit() > 4);
  CHECK(s.limit() <= 12);
  CHECK(s.peak_limit() == s.limit());
}

TEST_CASE("adaptive slots: a climbing latency lowers the limit, never below its minimum") {
  Slots s(AdaptiveLimit{8, 2, 16});
  load(s, 1, 20, 100);    // the best seen: 100 ms
  load(s, 1, 200, 1000);  // ten times slower: the daemon is saturated
  CHECK(s.limit() < 8);
  CHECK(s.limit() >= 2);
  load(s, 1, 500, 5000);
  CHECK(s.limit() == 2);
}

TEST_CASE("adaptive slots: without waiting work the limit does not grow (nothing shows it would help)") {
  Slots s(AdaptiveLimit{4, 2, 12});
  load(s, 1, 200, 100);  // one at a time: never more than 1 of 4 in use
  CHECK(s.limit() == 4);
}

TEST_CASE("fixed slots stay fixed, and 0 is no limit") {
  Slots s(3);
  load(s, 8, 100, 10);
  CHECK(s.limit() == 3);
  Slots none(0);
  CHECK(none.unlimited());
  for (int i = 0; i < 100; ++i) none.acquire();  // never blocks
}

TEST_CASE("slots: work ahead of need gets a slot only while no trial waits for one") {
  Slots s(1);
  s.acquire();  // held
  std::atomic<int> order{0};
  int ahead_at = 0, now_at = 0;
  std::thread ahead([&] {
    Slots::Hold h(&s, Slots::Priority::kAhead);
    ahead_at = ++order;
  });
  std::this_thread::sleep_for(Millis(50));  // the pool's preparation queues first
  std::thread now([&] {
    Slots::Hold h(&s);
    now_at = ++order;
  });
  std::this_thread::sleep_for(Millis(50));
  s.release();
  ahead.join();
  now.join();
  CHECK(now_at == 1);  // the trial, though it came second
  CHECK(ahead_at == 2);
}

TEST_CASE("background teardown: removals run under the gate's limit, and drain waits for every one") {
  Slots gate(2);
  std::atomic<int> running{0}, peak{0}, done{0};
  {
    stack::BackgroundTeardown bt(&gate, 8, nullptr);
    for (int i = 0; i < 12; ++i)
      bt.submit([&] {
        int now = ++running;
        for (int p = peak.load(); now > p && !peak.compare_exchange_weak(p, now);) {
        }
        std::this_thread::sleep_for(Millis(20));
        --running;
        ++done;
      });
    CHECK(bt.pending() > 0);  // submit returns at once: the trial is finished, removal is not
    bt.drain();
    CHECK(done.load() == 12);
    CHECK(bt.pending() == 0);
    CHECK(peak.load() <= 2);
    CHECK(bt.peak_running() <= 8);
    bt.submit([&] { ++done; });
  }  // the destructor drains too
  CHECK(done.load() == 13);
}
