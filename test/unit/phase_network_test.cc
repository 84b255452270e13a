// The runner's move between phases' networks: reading the default routes from /proc/net/route.
#include <doctest/doctest.h>

#include "trial/phase_network.h"

using forge::trial::default_gateways;

TEST_CASE("phase network: default routes' gateways, never the header's nor a subnet's route") {
  const std::string header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n";
  const std::string subnet = "eth0\t0010E70A\t00000000\t0001\t0\t0\t0\t00F0FFFF\t0\t0\t0\n";
  const std::string way_out = "eth1\t00000000\t010013AC\t0003\t0\t0\t0\t00000000\t0\t0\t0\n";
  CHECK(default_gateways(header + subnet).empty());
  CHECK(default_gateways(header + subnet + way_out) == std::vector<std::uint32_t>{0xAC130001u});  // 172.19.0.1
  CHECK(default_gateways("").empty());
  CHECK(default_gateways(header + "eth1\t00000000\tnothex!!\t0003\n").empty());
}

#include "results/trial_record.h"
#include "trial/enforced_networks.h"

TEST_CASE("phase network: run.json's per-task networks give each phase's policy; trials.jsonl keeps a trial's") {
  forge::manifest::TaskConfig t;
  auto& m = t.environment.manifest;
  m.network_policy = forge::manifest::NetworkPolicy::kNoInternet;
  m.setup_network_policy = forge::manifest::NetworkPolicy::kFullInternet;
  auto n = forge::trial::enforced_networks(t, false);
  CHECK(n.setup.policy == "full_internet");
  CHECK(n.agent.policy == "no_internet");
  CHECK(n.grade.policy == "none");

  forge::results::TrialRecord r;
  r.task_id = "t";
  r.networks = {{"setup", "full_internet"}, {"agent", "no_internet"}, {"grade", "none"}};
  auto back = forge::results::parse_trial_line(forge::results::to_json_line(r), "trials.jsonl:1");
  REQUIRE_MESSAGE(back.has_value(), (back ? "" : back.error().what()));
  CHECK(back->networks == r.networks);
  forge::results::TrialRecord older;  // a line without networks stays without
  CHECK(forge::results::to_json_line(older).find("networks") == std::string::npos);
}
