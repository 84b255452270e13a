// The enforcement probe before a sweep (docs/sweeps.md "The enforcement probe"), through the
// forgectl binary: on this host it passes and run.json says what it checked; on a host where the
// firewall step fails (a fake iptables first on PATH) the run stops with exit 2 before any trial.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>

#include "results/run_json.h"
#include "support/process.h"
#include "support/run_files.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

// orders-db: a json-db service, so its trials run on a no_internet network (probed).
std::string copy_networked_task(const TempDir& dir) {
  std::string to = dir.path() + "/tasks/orders-db";
  copy_example_task("orders-db", to);
  return to;
}

// A directory whose `iptables` and `ip6tables` fail as on a host without them (or without root).
std::string failing_iptables(const TempDir& dir) {
  std::string bin = dir.path() + "/fakebin";
  fs::create_directories(bin);
  for (const char* tool : {"iptables", "ip6tables"}) {
    std::string path = dir.write("fakebin/" + std::string(tool), "#!/bin/sh\necho \"$0: not permitted\" >&2\nexit 1\n");
    ::chmod(path.c_str(), 0755);
  }
  return bin;
}

}  // namespace

TEST_CASE("egress probe: passes on this host before the first trial, and run.json records it") {
  TempDir dir;
  std::string task = copy_networked_task(dir), out = dir.path() + "/run";
  auto r = forgectl_run({"run", task, "--agent", "oracle", "--out", out});
  REQUIRE_MESSAGE(r.code == 0, r.text());
  auto run = results::RunJson::read(out + "/run.json");
  REQUIRE(run.has_value());
  REQUIRE(run->egress_probe.size() == 1);
  const auto& p = run->egress_probe.front();
  CAPTURE(r.err);
  CHECK(p.policy == "no_internet");
  CHECK(p.passed);
  CHECK(p.error.empty());
  REQUIRE(p.checks.size() == 3);
  for (const auto& ch : p.checks) {
    CAPTURE(ch.name);
    CAPTURE(ch.observed);
    CHECK(ch.passed);
  }
  CHECK(p.checks[0].observed.find("refused by the trial's resolver") != std::string::npos);
  CHECK(p.checks[1].observed.find("internal") != std::string::npos);
  CHECK(p.checks[2].observed.find("no connection to forgectl's listener") != std::string::npos);
  MESSAGE("no_internet probe took " << p.took_ms << " ms");
  CHECK(p.took_ms < 5000);
}

TEST_CASE("egress probe: a host whose firewall step fails stops the run with exit 2 and records no trial") {
  TempDir dir;
  std::string task = copy_networked_task(dir), out = dir.path() + "/run";
  std::string path = failing_iptables(dir) + ":" + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
  auto r = forgectl_run({"run", task, "--agent", "oracle", "--out", out}, Millis(120000), {{"PATH", path}});
  CHECK_MESSAGE(r.code == 2, r.text());
  CHECK_MESSAGE(r.err.find("the no_internet enforcement probe failed") != std::string::npos, r.text());
  CHECK_MESSAGE(r.err.find("cannot add the host firewall rule") != std::string::npos, r.text());
  CHECK_MESSAGE(r.err.find("no trial was run") != std::string::npos, r.text());
  CHECK_FALSE(fs::exists(out + "/trials.jsonl"));
  CHECK_FALSE(fs::exists(out + "/trials"));
}
