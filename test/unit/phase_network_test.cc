// The runner's move between phases' networks: reading a way out from /proc/net/route.
#include <doctest/doctest.h>

#include "trial/phase_network.h"

using forge::trial::has_default_route;

TEST_CASE("phase network: a default route is a 00000000 destination, never the header or a subnet's route") {
  const std::string header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n";
  const std::string subnet = "eth0\t0010E70A\t00000000\t0001\t0\t0\t0\t00F0FFFF\t0\t0\t0\n";
  const std::string way_out = "eth1\t00000000\t0110E70A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n";
  CHECK_FALSE(has_default_route(header + subnet));
  CHECK(has_default_route(header + subnet + way_out));
  CHECK_FALSE(has_default_route(""));
  CHECK_FALSE(has_default_route(header));
}
