// Networks against the real daemon: internal flag, explicit subnet, labels, connect, list by label.
#include <doctest/doctest.h>

#include <set>

#include "core/strings.h"
#include "engine/exec.h"
#include "support/containers.h"

using namespace forge;
using namespace forge::test;

TEST_CASE("an internal network with an explicit subnet is created, inspected and removed") {
  auto& c = *docker_env().client;
  std::string subnet = free_test_subnet();
  std::string gateway = subnet.substr(0, subnet.rfind('.')) + "." + std::to_string(std::stoi(subnet.substr(subnet.rfind('.') + 1)) + 1);
  engine::NetworkSpec spec{"forgectl-test-net-" + random_hex(4)};
  spec.internal = true;
  spec.ipam = engine::IpamConfig{subnet, gateway};
  spec.labels = test_labels({{"io.forgectl.role", "internal"}});
  auto id = engine::create_network(c, spec);
  must(id);

  auto info = engine::inspect_network(c, *id);
  must(info);
  CHECK(info->name == spec.name);
  CHECK(info->internal);
  REQUIRE(info->ipam.size() == 1);
  CHECK(info->ipam[0].subnet == subnet);
  CHECK(info->ipam[0].gateway == gateway);
  CHECK(info->labels.at("io.forgectl.role") == "internal");

  SUBCASE("a second network of the same name is a conflict, not a duplicate") {
    auto again = engine::create_network(c, spec);
    REQUIRE_FALSE(again.has_value());
    CHECK(again.error().code == Errc::kConflict);
  }

  must(engine::remove_network(c, *id));
  auto gone = engine::inspect_network(c, *id);
  REQUIRE_FALSE(gone.has_value());
  CHECK(gone.error().code == Errc::kNotFound);
}

TEST_CASE("a container connected with aliases is reachable by them from a sibling") {
  auto& c = *docker_env().client;
  engine::NetworkSpec spec{"forgectl-test-alias-" + random_hex(4)};
  spec.internal = true;
  spec.ipam = engine::IpamConfig{free_test_subnet(), ""};
  TestNetwork net(spec);
  engine::NetworkSpec home_spec{"forgectl-test-home-" + random_hex(4)};
  home_spec.internal = true;
  home_spec.ipam = engine::IpamConfig{free_test_subnet(), ""};
  TestNetwork home(home_spec);

  // Created on one network, connected to a second with aliases before start (API 1.41 takes one
  // network at create).
  engine::ContainerSpec server;
  server.network = home.id;
  server.cmd = std::vector<std::string>{"sh", "-c", "echo hello-from-server > /tmp/index.html; exec httpd -f -p 8080 -h /tmp"};
  TestContainer srv(server, false);
  must(engine::connect_network(c, net.id, srv.id, {"svc-a", "alpha"}));
  must(engine::start_container(c, srv.id));

  engine::ContainerSpec client_spec;
  client_spec.network = net.id;
  TestContainer cli(client_spec);
  // busybox-static's wget crashes on Debian 12 (SIGSEGV even on the host); nc does the job.
  engine::ExecOptions get{{"sh", "-c",
                           "for i in 1 2 3 4 5 6 7 8 9 10; do printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | "
                           "nc -w 2 svc-a 8080 | tail -n 1 | grep . && exit 0; sleep 0.3; done; exit 1"}};
  get.timeout = Millis(30000);
  auto r = engine::exec_run(c, cli.id, get);
  must(r);
  CHECK(r->exit_code == 0);
  CHECK(r->out == "hello-from-server\n");

  auto info = engine::inspect_network(c, net.id);
  must(info);
  CHECK(info->containers.count(srv.id) == 1);
  CHECK(info->containers.count(cli.id) == 1);

  must(engine::disconnect_network(c, net.id, srv.id, true));
  auto after = engine::inspect_network(c, net.id);
  must(after);
  CHECK(after->containers.count(srv.id) == 0);
}

TEST_CASE("list by label finds only the objects carrying that label") {
  auto& c = *docker_env().client;
  std::string mine = random_hex(4);
  engine::ContainerSpec a, b, other;
  a.labels = {{"io.forgectl.stack", mine}, {"io.forgectl.role", "runner"}};
  b.labels = {{"io.forgectl.stack", mine}, {"io.forgectl.role", "service"}};
  other.labels = {{"io.forgectl.stack", mine + "-other"}};
  TestContainer ca(a, false), cb(b, false), co(other, false);

  auto both = engine::list_containers(c, {{"label", {"io.forgectl.stack=" + mine}}});
  must(both);
  std::set<std::string> ids;
  for (const auto& x : *both) ids.insert(x.id);
  CHECK(ids == std::set<std::string>{ca.id, cb.id});

  auto runner = engine::list_containers(c, {{"label", {"io.forgectl.stack=" + mine, "io.forgectl.role=runner"}}});
  must(runner);
  REQUIRE(runner->size() == 1);
  CHECK(runner->front().id == ca.id);
  CHECK(runner->front().labels.at("io.forgectl.role") == "runner");

  TestNetwork n1({"forgectl-test-l1-" + mine, "bridge", true, false, false, engine::IpamConfig{free_test_subnet(), ""},
                  {{"io.forgectl.stack", mine}}, {}});
  auto nets = engine::list_networks(c, {{"label", {"io.forgectl.stack=" + mine}}});
  must(nets);
  REQUIRE(nets->size() == 1);
  CHECK(nets->front().id == n1.id);
}
