// The enforcement probe's pure parts: the script it runs and the verdict on what it printed.
#include <doctest/doctest.h>

#include "sweep/egress_probe.h"

using namespace forge;
using namespace forge::sweep;

namespace {

ProbeTargets targets() {
  ProbeTargets t;
  t.host_addresses = {"10.99.0.1", "192.168.1.5"};
  t.port = 40123;
  t.name = "fgabc.unlisted.invalid";
  return t;
}

constexpr const char* kRefused =
    "dns:Server:\t\t127.0.0.11 Address:\t127.0.0.11:53  ** server can't find fgabc.unlisted.invalid: REFUSED \n";

}  // namespace

TEST_CASE("egress probe script: tries each host address at the port, looks the name up") {
  auto s = probe_script(targets());
  CHECK(s.find("nc 10.99.0.1 40123") != std::string::npos);
  CHECK(s.find("nc 192.168.1.5 40123") != std::string::npos);
  CHECK(s.find("nslookup fgabc.unlisted.invalid") != std::string::npos);
}

TEST_CASE("egress probe verdict: refused and nothing reached passes every check") {
  auto checks = judge_probe(kRefused, {}, targets());
  REQUIRE(checks.size() == 2);
  for (const auto& c : checks) CHECK_MESSAGE(c.passed, c.name << ": " << c.observed);
}

TEST_CASE("egress probe verdict: each way a host fails to enforce fails its own check, saying what was seen") {
  SUBCASE("the name resolved") {
    auto checks = judge_probe("dns:Name: fgabc.unlisted.invalid Address: 93.184.216.34\n", {}, targets());
    CHECK_FALSE(checks[0].passed);
    CHECK(checks[0].observed.find("93.184.216.34") != std::string::npos);
    CHECK(checks[1].passed);
  }
  SUBCASE("the daemon ignored internal") {
    auto c = judge_network("fg-x-internal", false);
    CHECK_FALSE(c.passed);
    CHECK(c.observed.find("fg-x-internal as not internal") != std::string::npos);
    CHECK(judge_network("fg-x-internal", true).passed);
    CHECK_FALSE(judge_network("fg-x-internal", fail(Errc::kNotFound, "no such network")).passed);
  }
  SUBCASE("the host's listener was reached: the firewall did not hold") {
    auto checks = judge_probe(kRefused, {"10.99.0.1"}, targets());
    CHECK_FALSE(checks[1].passed);
    CHECK(checks[1].observed.find("10.99.0.1 port 40123") != std::string::npos);
  }
  SUBCASE("no output at all fails, never passes") {
    auto checks = judge_probe("", {}, targets());
    CHECK_FALSE(checks[0].passed);
  }
}

TEST_CASE("egress probe verdict: a host check skipped on purpose says why and does not fail") {
  auto t = targets();
  t.host_addresses.clear();
  t.host_skipped = "FORGECTL_HOST_FIREWALL=off";
  auto checks = judge_probe(kRefused, {}, t);
  CHECK(checks[1].passed);
  CHECK(checks[1].observed == "skipped: FORGECTL_HOST_FIREWALL=off");
  CHECK(probe_script(t).find("nc ") == std::string::npos);
}

TEST_CASE("egress probe failure: names the policy, the engine and the failed check; empty when all passed") {
  results::ProbeRecord ok{"no_internet", "unix:///var/run/docker.sock", true, {{"network internal", true, "…"}}, "", 900};
  results::ProbeRecord bad{"limited_internet", "unix:///var/run/docker.sock", false,
                           {{"unlisted name refused", true, "…"}, {"host unreachable", false, "reached 10.0.0.1"}}, "", 950};
  CHECK(probe_failure({ok}).empty());
  CHECK(probe_failure({ok, bad}) ==
        "the limited_internet enforcement probe failed on unix:///var/run/docker.sock: host unreachable: reached 10.0.0.1");
  bad.error = "cannot add the host firewall rule";
  CHECK(probe_failure({bad}).find("failed on unix:///var/run/docker.sock: cannot add the host firewall rule") !=
        std::string::npos);
}

TEST_CASE("egress probe: every closed policy a phase runs under is probed — setup's, the agent's and a grader's own") {
  using manifest::NetworkPolicy;
  auto task = [](NetworkPolicy setup, NetworkPolicy agent, NetworkPolicy grade) {
    manifest::TaskConfig t;
    t.environment.manifest.setup_network_policy = setup;
    t.environment.manifest.network_policy = agent;
    t.environment.manifest.grade_network_policy = grade;
    return t;
  };
  const std::vector<NetworkPolicy> both{NetworkPolicy::kNoInternet, NetworkPolicy::kLimitedInternet};
  // A limited setup before an offline agent: both stacks' policies.
  CHECK(policies_to_probe({task(NetworkPolicy::kLimitedInternet, NetworkPolicy::kNoInternet, NetworkPolicy::kNoInternet)},
                          false) == both);
  // A network-free trial (offline, no services) whose test scripts have an allowlist of their own.
  CHECK(policies_to_probe({task(NetworkPolicy::kNoInternet, NetworkPolicy::kNoInternet, NetworkPolicy::kLimitedInternet)},
                          false) == std::vector<NetworkPolicy>{NetworkPolicy::kLimitedInternet});
  // Open everywhere: nothing to probe.
  CHECK(policies_to_probe({task(NetworkPolicy::kFullInternet, NetworkPolicy::kFullInternet, NetworkPolicy::kNoInternet)},
                          false)
            .empty());
}
