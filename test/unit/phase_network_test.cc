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
