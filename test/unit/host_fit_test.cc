// The host-resource check before a sweep's first trial, on fake limits.
#include <doctest/doctest.h>

#include "sweep/host_fit.h"

using forge::sweep::fit_to_host;
using forge::sweep::HostLimits;
using forge::sweep::TrialNeeds;

TEST_CASE("host fit: a host with room for everything keeps the concurrency and a pool of the same size") {
  HostLimits h;
  h.nofile = 1 << 20;
  h.mem_available_mib = 24000;
  h.subnet_trials = 4000;
  auto fit = fit_to_host(64, -1, h, TrialNeeds{});
  REQUIRE(fit.has_value());
  CHECK(fit->concurrency == 64);
  CHECK(fit->pool == 64);
  CHECK(fit->messages.empty());
}

TEST_CASE("host fit: RLIMIT_NOFILE lowers the concurrency with one message naming it") {
  HostLimits h;
  h.nofile = 64 + 8 * 10;  // the run's own 64, then ten trials of 8
  auto fit = fit_to_host(64, -1, h, TrialNeeds{});
  REQUIRE(fit.has_value());
  CHECK(fit->concurrency == 10);
  REQUIRE(fit->messages.size() == 1);
  CHECK(fit->messages[0].find("RLIMIT_NOFILE 144") != std::string::npos);
  CHECK(fit->messages[0].find("lowered from 64 to 10") != std::string::npos);
  CHECK(fit->messages[0].find("ulimit -n") != std::string::npos);
  CHECK(fit->pool == 0);  // nothing left for sandboxes ahead: they hold descriptors too
}

TEST_CASE("host fit: memory at rest lowers the concurrency; the pool gets only what is left") {
  HostLimits h;
  h.mem_available_mib = 1000;  // 80 %: 800 MiB, 33 sandboxes of 24 MiB
  TrialNeeds n;
  auto fit = fit_to_host(20, -1, h, n);
  REQUIRE(fit.has_value());
  CHECK(fit->concurrency == 20);
  CHECK(fit->pool == 13);  // 33 − 20 in flight
  auto tight = fit_to_host(64, -1, h, n);
  REQUIRE(tight.has_value());
  CHECK(tight->concurrency == 33);
  CHECK(tight->pool == 0);
  REQUIRE(tight->messages.size() == 1);
  CHECK(tight->messages[0].find("MemAvailable 1000 MiB") != std::string::npos);
}

TEST_CASE("host fit: memory limits beyond what is available warn, without lowering") {
  HostLimits h;
  h.mem_available_mib = 24000;
  TrialNeeds n;
  n.limit_mib = 2048;
  auto fit = fit_to_host(64, 0, h, n);
  REQUIRE(fit.has_value());
  CHECK(fit->concurrency == 64);
  CHECK(fit->pool == 0);  // --warm-pool 0
  REQUIRE(fit->messages.size() == 1);
  CHECK(fit->messages[0].rfind("warning: 64 trial(s) at once may use up to 131072 MiB", 0) == 0);
}

TEST_CASE("host fit: the tightest of several limits decides, each lowering said once") {
  HostLimits h;
  h.nofile = 64 + 8 * 30;
  h.subnet_trials = 12;
  h.subnet_note = "the subnet pool 10.99.0.0/24 (2 network(s) a trial)";
  auto fit = fit_to_host(50, 5, h, TrialNeeds{});
  REQUIRE(fit.has_value());
  CHECK(fit->concurrency == 12);
  REQUIRE(fit->messages.size() == 1);  // the descriptors fit 30 ≥ 12: nothing more to say
  CHECK(fit->messages[0].find("the subnet pool 10.99.0.0/24") != std::string::npos);
  CHECK(fit->pool == 0);  // the subnets are all taken by the trials in flight
}

TEST_CASE("host fit: a limit that fits not even one trial refuses the run, naming it") {
  HostLimits h;
  h.nofile = 40;  // below the run's own 64
  auto fit = fit_to_host(4, -1, h, TrialNeeds{});
  REQUIRE_FALSE(fit.has_value());
  CHECK(fit.error().message.find("RLIMIT_NOFILE 40 fits no trial") != std::string::npos);
  HostLimits m;
  m.mem_available_mib = 10;
  auto mem = fit_to_host(1, -1, m, TrialNeeds{});
  REQUIRE_FALSE(mem.has_value());
  CHECK(mem.error().message.find("MemAvailable 10 MiB fits no trial") != std::string::npos);
}
