// Runs independent calls concurrently (each Engine call blocks on the daemon, not the CPU).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace forge {

// Calls f(i) for i in [0, n) on up to `width` threads; returns when all are done.
template <typename F>
void parallel_for(std::size_t n, F f, std::size_t width = 8) {
  if (n == 0) return;
  if (n == 1 || width <= 1) {
    for (std::size_t i = 0; i < n; ++i) f(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < std::min(n, width); ++t)
    threads.emplace_back([&] {
      for (std::size_t i; (i = next.fetch_add(1)) < n;) f(i);
    });
  for (auto& t : threads) t.join();
}

}  // namespace forge
