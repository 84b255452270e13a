// The policy layer without Docker: topology per posture, subnet reservations, hardening checks.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/strings.h"
#include "core/process_identity.h"
#include "manifest/stacks.h"
#include "policy/firewall.h"
#include "policy/hardening.h"
#include "policy/subnets.h"
#include "policy/topology.h"

using namespace forge;
using namespace forge::policy;
using manifest::NetworkPolicy;

namespace {

manifest::LoadedEnvironment env_with(NetworkPolicy p, const char* stack = "core") {
  manifest::LoadedEnvironment env;
  env.source = "/t/env.yaml";
  env.manifest.network_policy = p;
  if (p == NetworkPolicy::kLimitedInternet) env.manifest.allowlist = {"API.Example.com", "*.pypi.org"};
  auto s = manifest::builtin_stack(stack);
  REQUIRE(s.has_value());
  env.compose = *s;
  return env;
}

StackPlan plan(const manifest::LoadedEnvironment& env) {
  std::vector<Ipv4Net> nets;
  for (std::size_t i = 0; i < network_keys(env).size(); ++i)
    nets.push_back(Ipv4Net{0x0ae70000u + static_cast<unsigned>(i) * 16, 28});
  PlanOptions o{"fg-t-1", {}, "forgectl/squid:local", [](const std::string& k) -> std::optional<std::string> {
                  if (k == "HF_TOKEN") return std::string("hf-123");
                  return std::nullopt;
                }};
  auto p = plan_stack(env, o, nets);
  REQUIRE_MESSAGE(p.has_value(), (p ? "" : p.error().what()));
  return *p;
}

bool has_env(const ContainerPlan& c, const std::string& kv) { return std::find(c.env.begin(), c.env.end(), kv) != c.env.end(); }

struct TempState {
  std::string dir = (std::filesystem::temp_directory_path() / ("forgectl-pool-" + random_hex(4))).string();
  ~TempState() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

}  // namespace

TEST_CASE("no_internet: one internal network for services and runner, no proxy, fast-failing DNS") {
  auto p = plan(env_with(NetworkPolicy::kNoInternet));
  REQUIRE(p.networks.size() == 1);
  CHECK(p.networks[0].internal);
  CHECK(p.networks[0].name == "fg-t-1-internal");
  CHECK(p.networks[0].bridge.size() <= 15);
  CHECK_FALSE(p.proxy.has_value());
  REQUIRE(p.services.size() == 1);
  CHECK(p.services[0].key == "json-db");
  CHECK(p.services[0].networks[0].network_key == "internal");
  CHECK(p.services[0].dns_options == kFastDnsOptions);
  CHECK(p.runner.networks.size() == 1);
  CHECK(p.runner.networks[0].aliases == std::vector<std::string>{"runner"});
  CHECK(p.runner.hardening.cap_add == std::vector<std::string>{"NET_BIND_SERVICE"});
  for (const auto& e : p.runner.env) CHECK(e.find("PROXY") == std::string::npos);
}

TEST_CASE("limited_internet: a proxy on internal and edge, proxy variables in both cases, squid config from the allowlist") {
  auto p = plan(env_with(NetworkPolicy::kLimitedInternet));
  REQUIRE(p.networks.size() == 2);
  CHECK(p.networks[0].internal);
  CHECK_FALSE(p.networks[1].internal);
  REQUIRE(p.proxy.has_value());
  CHECK(p.proxy->networks.size() == 2);
  CHECK(p.proxy->networks[0].aliases == std::vector<std::string>{"egress-proxy", "egress-dns"});  // the resolver in its namespace
  CHECK(p.proxy->hardening.user == "13:13");
  CHECK(p.proxy->hardening.readonly_rootfs);
  CHECK(p.proxy->dns_options.empty());  // squid resolves through the embedded DNS itself
  for (const auto* c : {&p.runner, &p.services[0]}) {
    CHECK(has_env(*c, "HTTPS_PROXY=http://egress-proxy:3128"));
    CHECK(has_env(*c, "http_proxy=http://egress-proxy:3128"));
    CHECK(has_env(*c, "no_proxy=localhost,127.0.0.1,::1,json-db,db-service,tolokaforge-db-service,runner"));
  }
  CHECK(p.squid_conf.find("api.example.com") != std::string::npos);
  CHECK(p.squid_conf.find(".pypi.org") != std::string::npos);
  CHECK(p.squid_conf.find("acl task_clients src 10.231.0.0/28") != std::string::npos);
}

TEST_CASE("limited_internet: an upstream sits on its own internal network with the proxy, off the task network") {
  auto env = env_with(NetworkPolicy::kLimitedInternet);
  manifest::ComposeService up;
  up.name = "index";
  up.image = "forgectl/runner:local";
  up.upstream = true;
  up.networks["default"] = {"pkgs.example.test"};
  env.compose.services.push_back(up);
  env.manifest.allowlist = {"pkgs.example.test"};
  CHECK(network_keys(env) == std::vector<std::string>{"internal", "edge", "upstream"});
  CHECK(network_prefixes(env) == std::vector<int>{28, 29, 29});
  auto p = plan(env);
  REQUIRE(p.networks.size() == 3);
  CHECK(p.networks[2].key == "upstream");
  CHECK(p.networks[2].internal);  // the upstream reaches nothing but the proxy: no internet
  REQUIRE(p.services.size() == 2);
  const auto& u = p.services[1];
  REQUIRE(u.networks.size() == 1);
  CHECK(u.networks[0].network_key == "upstream");
  CHECK(u.networks[0].aliases == std::vector<std::string>{"index", "pkgs.example.test"});
  CHECK(u.hardening.cap_drop == std::vector<std::string>{"ALL"});  // hardened like every service
  for (const auto& e : u.env) CHECK(e.find("PROXY") == std::string::npos);
  REQUIRE(p.proxy.has_value());
  REQUIRE(p.proxy->networks.size() == 3);
  CHECK(p.proxy->networks[2].network_key == "upstream");
  // The runner goes through the proxy for it: its names are not in NO_PROXY.
  CHECK(has_env(p.runner, "NO_PROXY=localhost,127.0.0.1,::1,json-db,db-service,tolokaforge-db-service,runner"));
  CHECK(p.squid_conf.find("acl to_upstream_egr dst " + p.networks[2].subnet.str()) != std::string::npos);
  CHECK(p.squid_conf.find("http_access deny to_private_egr !to_upstream_egr") != std::string::npos);
  CHECK(p.squid_conf.find("acl to_upstream_gw_egr dst " + p.networks[2].subnet.gateway() + "/32") != std::string::npos);
  // Without an upstream, nothing changes.
  CHECK(network_keys(env_with(NetworkPolicy::kLimitedInternet)) == std::vector<std::string>{"internal", "edge"});
}

TEST_CASE("planning refuses an upstream outside limited_internet, one nobody could reach, and one shadowing a task name") {
  manifest::ComposeService up;
  up.name = "index";
  up.image = "forgectl/runner:local";
  up.upstream = true;
  up.where.line = 3;
  auto no = env_with(NetworkPolicy::kNoInternet);
  no.compose.path = "/t/compose.yaml";
  no.compose.services.push_back(up);
  auto r = plan_stack(no, {"s", {}, "p", {}}, {Ipv4Net{0x0ae70000u, 28}});
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().what().find("/t/compose.yaml:3: service 'index' is an upstream") != std::string::npos);
  CHECK(r.error().what().find("this is no_internet") != std::string::npos);

  auto lim = env_with(NetworkPolicy::kLimitedInternet);
  lim.compose.path = "/t/compose.yaml";
  lim.compose.services.push_back(up);
  const std::vector<Ipv4Net> three{Ipv4Net{0x0ae70000u, 28}, Ipv4Net{0x0ae70010u, 29}, Ipv4Net{0x0ae70018u, 29}};
  auto unreachable = plan_stack(lim, {"s", {}, "p", {}}, three);
  REQUIRE_FALSE(unreachable.has_value());
  CHECK(unreachable.error().what().find("none of its names (index) is on limited_internet_allowlist") != std::string::npos);

  lim.manifest.allowlist = {"index", "json-db.example"};
  lim.compose.services.back().networks["default"] = {"json-db"};
  auto clash = plan_stack(lim, {"s", {}, "p", {}}, three);
  REQUIRE_FALSE(clash.has_value());
  CHECK(clash.error().what().find("the name 'json-db' is also a name on the task network") != std::string::npos);
}

TEST_CASE("full_internet: the stack on one ordinary network, nothing injected") {
  auto p = plan(env_with(NetworkPolicy::kFullInternet));
  REQUIRE(p.networks.size() == 1);
  CHECK_FALSE(p.networks[0].internal);
  CHECK_FALSE(p.proxy.has_value());
  CHECK(p.runner.dns_options.empty());
}

TEST_CASE("planning refuses reserved names, names shadowing allowlisted hosts, and unset passthrough variables") {
  auto env = env_with(NetworkPolicy::kNoInternet);
  env.compose.services[0].name = "runner";
  std::vector<Ipv4Net> one{Ipv4Net{0x0ae70000u, 28}};
  auto r = plan_stack(env, {"s", {}, "p", {}}, one);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().what().find("reserved") != std::string::npos);

  auto lim = env_with(NetworkPolicy::kLimitedInternet);
  lim.manifest.allowlist = {".db-service"};
  auto shadow = plan_stack(lim, {"s", {}, "p", {}}, {Ipv4Net{0x0ae70000u, 28}, Ipv4Net{0x0ae70010u, 29}});
  REQUIRE_FALSE(shadow.has_value());
  CHECK(shadow.error().what().find("would shadow") != std::string::npos);

  auto pass = env_with(NetworkPolicy::kNoInternet);
  pass.manifest.runner.env_passthrough = {"NOT_SET_ANYWHERE"};
  auto missing = plan_stack(pass, {"s", {}, "p", [](const std::string&) { return std::optional<std::string>(); }}, one);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().what().find("NOT_SET_ANYWHERE") != std::string::npos);
}

TEST_CASE("env_passthrough lets exactly the named host variable into the runner") {
  auto env = env_with(NetworkPolicy::kNoInternet);
  env.manifest.runner.env_passthrough = {"HF_TOKEN"};
  auto p = plan(env);
  CHECK(has_env(p.runner, "HF_TOKEN=hf-123"));
  for (const auto& e : p.services[0].env) CHECK(e.find("HF_TOKEN") == std::string::npos);
}

TEST_CASE("subnets: reservations never overlap what the daemon has or what another process holds") {
  TempState st;
  auto pool = parse_cidr("10.231.0.0/24");
  REQUIRE(pool.has_value());
  SubnetPool sp(*pool, st.dir);
  auto a = sp.reserve({28, 28}, {"10.231.0.0/28", "172.17.0.0/16"});
  REQUIRE(a.has_value());
  REQUIRE(a->size() == 2);
  CHECK((*a)[0].str() == "10.231.0.16/28");  // .0/28 is the daemon's already
  CHECK((*a)[1].str() == "10.231.0.32/28");
  auto b = sp.reserve({27}, {"10.231.0.0/28"});  // ours are still reserved, so b skips them
  REQUIRE(b.has_value());
  CHECK((*b)[0].str() == "10.231.0.64/27");
  REQUIRE(sp.release(*a).has_value());
  auto c = sp.reserve({28}, {"10.231.0.0/28"});
  REQUIRE(c.has_value());
  CHECK((*c)[0].str() == "10.231.0.16/28");  // released, so free again
}

TEST_CASE("subnets: a dead owner's reservation lapses; an exhausted pool says what to do") {
  TempState st;
  std::filesystem::create_directories(st.dir);
  std::ofstream(st.dir + "/subnets.reserved") << "10.231.0.0/28 otherhost:1:1 9999999999\n"
                                              << "10.231.0.16/28 " << ProcessIdentity{ProcessIdentity::current().host, 999999, 5}.str()
                                              << " 9999999999\n";
  SubnetPool sp(*parse_cidr("10.231.0.0/26"), st.dir);
  auto r = sp.reserve({28}, std::vector<std::string>{});
  REQUIRE(r.has_value());
  CHECK((*r)[0].str() == "10.231.0.16/28");  // pid 999999 is not alive here; the other host's stays
  auto full = sp.reserve({28, 28, 28}, std::vector<std::string>{});
  REQUIRE_FALSE(full.has_value());
  CHECK(full.error().what().find("exhausted") != std::string::npos);
  CHECK(full.error().what().find("FORGECTL_SUBNET_POOL") != std::string::npos);
}

TEST_CASE("subnets: prune drops the reservations of dead owners and lapsed ones, keeps live and foreign ones") {
  TempState st;
  std::filesystem::create_directories(st.dir);
  const std::string host = ProcessIdentity::current().host;
  const std::string me = ProcessIdentity::current().str();
  std::ofstream(st.dir + "/subnets.reserved") << "10.231.0.0/28 otherhost:1:1 9999999999\n"
                                              << "10.231.0.16/28 " << ProcessIdentity{host, 999999, 5}.str() << " 9999999999\n"
                                              << "10.231.0.32/28 " << me << " 9999999999\n"
                                              << "10.231.0.48/28 " << me << " 1\n";
  SubnetPool sp(*parse_cidr("10.231.0.0/24"), st.dir);
  auto n = sp.prune();
  REQUIRE(n.has_value());
  CHECK(*n == 2);  // pid 999999 is gone; the last one lapsed in 1970
  std::ifstream in(st.dir + "/subnets.reserved");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  CHECK(text == "10.231.0.0/28 otherhost:1:1 9999999999\n10.231.0.32/28 " + me + " 9999999999\n");
  auto again = sp.prune();
  REQUIRE(again.has_value());
  CHECK(*again == 0);
}

TEST_CASE("cidr parsing and sizes") {
  CHECK(parse_cidr("10.231.0.0/16")->str() == "10.231.0.0/16");
  CHECK(parse_cidr("10.231.0.16/28")->gateway() == "10.231.0.17");
  CHECK_FALSE(parse_cidr("10.231.0.1/16").has_value());
  CHECK_FALSE(parse_cidr("300.1.1.1/8").has_value());
  CHECK(prefix_for(3) == 28);
  CHECK(prefix_for(13) == 28);
  CHECK(prefix_for(14) == 27);
}

TEST_CASE("hardening mismatches name each missing field; capability spellings are equivalent") {
  Hardening want = runner_hardening({}, false);
  Hardening got = want;
  CHECK(hardening_mismatches(want, got).empty());
  got.cap_add = {"cap_net_bind_service"};
  CHECK(hardening_mismatches(want, got).empty());
  got.cap_drop = {};
  got.init = false;
  got.memory = 0;
  auto m = hardening_mismatches(want, got);
  REQUIRE(m.size() == 3);
  CHECK(m[0].find("CapDrop") == 0);
  CHECK(m[1].find("Memory") == 0);
  CHECK(m[2].find("Init") == 0);
}

TEST_CASE("services: drop ALL unless they add; isolation only tightens; cpus fit the host") {
  manifest::ComposeService svc;
  svc.name = "db";
  svc.cap_add = {"cap_chown"};
  svc.mem_limit = 512 << 20;
  manifest::ServiceIsolation iso;
  iso.resources.memory = 256 << 20;
  auto h = service_hardening(svc, &iso);
  CHECK(h.cap_drop == std::vector<std::string>{"ALL"});
  CHECK(h.cap_add == std::vector<std::string>{"CHOWN"});
  CHECK(h.memory == 256 << 20);
  iso.resources.memory = 1LL << 30;
  CHECK(service_hardening(svc, &iso).memory == 512 << 20);
  h.nano_cpus = 4000000000;
  CHECK(fit_to_host(h, 2).size() == 1);
  CHECK(h.nano_cpus == 2000000000);
}

TEST_CASE("firewall rules: one per bridge, owned by the stack, removable") {
  auto add = firewall_add("fgabc", "fg-s-1");
  auto del = firewall_delete("fgabc", "fg-s-1");
  REQUIRE(add.size() == 2);
  CHECK(add[0][0] == "iptables");
  CHECK(add[1][0] == "ip6tables");
  CHECK(join(add[0], " ") ==
        "iptables -w 5 -I INPUT -i fgabc -m conntrack ! --ctstate ESTABLISHED,RELATED -m comment --comment forgectl:fg-s-1 -j DROP");
  CHECK(join(del[0], " ").find(" -D INPUT ") != std::string::npos);
}

TEST_CASE("firewall rules: forgectl's are read back from iptables -S, quoted or not; others and odd names are not") {
  std::string listing =
      "-P INPUT ACCEPT\n"
      "-A INPUT -i fgabc -m conntrack ! --ctstate RELATED,ESTABLISHED -m comment --comment \"forgectl:fg-s-1\" -j "
      "DROP\n"
      "-A INPUT -i fgdef -m conntrack ! --ctstate RELATED,ESTABLISHED -m comment --comment forgectl:fg-s-2 -j DROP\n"
      "-A INPUT -i docker0 -m comment --comment \"someone else\" -j ACCEPT\n"
      "-A INPUT -i br+ -m comment --comment \"forgectl:fg-s-3\" -j DROP\n"
      "-A INPUT -m comment --comment \"forgectl:fg-s-4\" -j DROP";
  auto rules = forgectl_rules(listing);
  REQUIRE(rules.size() == 2);
  CHECK(rules[0] == HostRule{"fgabc", "fg-s-1"});
  CHECK(rules[1] == HostRule{"fgdef", "fg-s-2"});
  CHECK(forgectl_rules("").empty());
}

TEST_CASE("closed networks: the trial's resolver at the task subnet's last address is every container's upstream") {
  auto no = plan(env_with(NetworkPolicy::kNoInternet));
  REQUIRE(no.resolver.has_value());
  CHECK(no.resolver->image == kResolverImage);
  CHECK(no.resolver->role == Role::kResolver);
  CHECK(no.resolver->hardening.user == "65534:65534");
  CHECK(no.resolver->hardening.readonly_rootfs);
  REQUIRE(no.resolver->networks.size() == 1);  // no way out: it refuses everything
  CHECK(no.resolver->networks[0].ipv4 == "10.231.0.14");
  CHECK(no.resolver->cmd == std::vector<std::string>{"forgectl", "serve", "dns", "--port", "53"});
  CHECK(no.runner.dns == std::vector<std::string>{"10.231.0.14"});
  CHECK(no.services[0].dns == std::vector<std::string>{"10.231.0.14"});

  // limited_internet: the allowlist's exact names, a wildcard entry's domain but none of its
  // subdomains; in the proxy's network namespace, which is on the edge too, to look them up. The
  // proxy holds the resolver's address and name on the task network.
  auto lim = plan(env_with(NetworkPolicy::kLimitedInternet));
  REQUIRE(lim.resolver.has_value());
  CHECK(lim.resolver->networks.empty());
  CHECK(lim.resolver->netns_of == "egress-proxy");
  CHECK(lim.resolver_address == "10.231.0.14");
  REQUIRE(lim.proxy->networks.size() == 2);
  CHECK(lim.proxy->networks[0].network_key == "internal");
  CHECK(lim.proxy->networks[0].ipv4 == "10.231.0.14");
  CHECK(lim.proxy->networks[0].aliases == std::vector<std::string>{"egress-proxy", "egress-dns"});
  CHECK(lim.proxy->networks[1].network_key == "edge");
  CHECK(lim.resolver->cmd == std::vector<std::string>{"forgectl", "serve", "dns", "--port", "53", "--allow",
                                                      "pypi.org", "--allow", "api.example.com"});
  CHECK(lim.runner.dns == std::vector<std::string>{"10.231.0.14"});
  CHECK(lim.proxy->dns.empty());  // the proxy looks up what it connects to itself

  auto full = plan(env_with(NetworkPolicy::kFullInternet));
  CHECK_FALSE(full.resolver.has_value());
  CHECK(full.runner.dns.empty());
}

bool env_starts(const std::vector<std::string>& env, const std::string& prefix) {
  return std::any_of(env.begin(), env.end(), [&](const std::string& kv) { return kv.rfind(prefix, 0) == 0; });
}

TEST_CASE("per-phase policy: full_internet setup before a limited_internet agent — the proxy joins the task network for the agent, setup's proxy variables emptied") {
  auto env = env_with(NetworkPolicy::kLimitedInternet);
  env.manifest.setup_network_policy = NetworkPolicy::kFullInternet;
  CHECK(network_keys(env) == std::vector<std::string>{"internal", "edge", "net"});
  auto p = plan(env);
  CHECK(p.runner_moves);
  REQUIRE(p.proxy.has_value());
  CHECK(p.proxy_switches);
  REQUIRE(p.proxy->networks.size() == 1);  // the edge only: not on the task network while setup is open
  CHECK(p.proxy->networks[0].network_key == "edge");
  CHECK(env_starts(p.runner.env, "HTTPS_PROXY=http://egress-proxy:"));  // the agent's, from create
  CHECK(std::find(p.setup_env.begin(), p.setup_env.end(), "HTTPS_PROXY=") != p.setup_env.end());
  CHECK(std::find(p.setup_env.begin(), p.setup_env.end(), "no_proxy=*") != p.setup_env.end());
  REQUIRE(p.resolver.has_value());
  CHECK(p.resolver_switches);
  CHECK(p.resolver->cmd->back() == "open");
  CHECK(runner_network_keys(p, NetworkPolicy::kLimitedInternet) == std::vector<std::string>{"internal"});
  CHECK(runner_network_keys(p, NetworkPolicy::kFullInternet) == std::vector<std::string>{"internal", "net"});
  CHECK_FALSE(p.squid_conf.empty());
}

TEST_CASE("per-phase policy: limited_internet setup before a no_internet agent — the proxy on the task network at create, its variables setup's alone") {
  auto env = env_with(NetworkPolicy::kNoInternet);
  env.manifest.setup_network_policy = NetworkPolicy::kLimitedInternet;
  env.manifest.allowlist = {"deb.example.org"};
  CHECK(network_keys(env) == std::vector<std::string>{"internal", "edge"});
  auto p = plan(env);
  REQUIRE(p.proxy.has_value());
  CHECK(p.proxy_switches);
  REQUIRE(p.proxy->networks.size() == 2);
  CHECK(p.proxy->networks[0].network_key == "internal");
  CHECK(p.proxy->networks[0].aliases == std::vector<std::string>{"egress-proxy"});
  CHECK_FALSE(env_starts(p.runner.env, "HTTPS_PROXY="));  // the agent never has them
  CHECK(env_starts(p.setup_env, "HTTPS_PROXY=http://egress-proxy:"));
  REQUIRE(p.resolver.has_value());
  // The allowlist's name at setup (the default mode), none once the agent's phase begins.
  CHECK(std::find(p.resolver->cmd->begin(), p.resolver->cmd->end(), "deb.example.org") != p.resolver->cmd->end());
  CHECK(std::find(p.resolver->cmd->begin(), p.resolver->cmd->end(), "--mode") == p.resolver->cmd->end());
  CHECK(p.resolver_switches);
  CHECK(p.resolver->networks.back().network_key == "edge");

  auto same = plan(env_with(NetworkPolicy::kLimitedInternet));
  CHECK_FALSE(same.proxy_switches);
  CHECK(same.setup_env.empty());
  REQUIRE(same.proxy->networks.size() == 2);
  CHECK(same.proxy->networks[0].network_key == "internal");
}

TEST_CASE("per-phase policy: Harbor steps with their own allowlists and a public step — one proxy config per allowlist and an open one, the resolver's names by allowlist") {
  auto env = env_with(NetworkPolicy::kLimitedInternet);
  auto& m = env.manifest;
  m.allowlist = {"a.example"};
  m.step_network_policies = {NetworkPolicy::kLimitedInternet, NetworkPolicy::kLimitedInternet, NetworkPolicy::kFullInternet};
  m.step_allowlists = {{"a.example"}, {"B.example"}, {}};
  REQUIRE(manifest::runner_changes_network(m));
  CHECK(network_keys(env) == std::vector<std::string>{"internal", "edge", "net"});
  auto p = plan(env);
  REQUIRE(p.allowlists.size() == 2);
  CHECK(allowlist_index(p, {"b.example"}) == 1);
  CHECK(allowlist_index(p, {"A.example"}) == 0);
  CHECK(allowlist_index(p, {"c.example"}) == -1);
  REQUIRE(p.squid_confs.size() == 2);
  CHECK(p.squid_confs[0] == p.squid_conf);
  CHECK(p.squid_confs[1].find("dstdomain -n b.example") != std::string::npos);
  CHECK(p.squid_confs[1].find("a.example") == std::string::npos);
  CHECK(p.squid_open_conf.find("http_access allow all") != std::string::npos);
  CHECK(p.squid_open_conf.find("deny !allowlist") == std::string::npos);
  CHECK(p.squid_open_conf.find("http_access deny to_localhost") != std::string::npos);  // still never the host
  REQUIRE(p.resolver.has_value());
  const auto& cmd = *p.resolver->cmd;
  CHECK(std::find(cmd.begin(), cmd.end(), "a.example") != cmd.end());
  CHECK(std::find(cmd.begin(), cmd.end(), "1:b.example") != cmd.end());
  CHECK(p.proxy_switches);
  CHECK(p.proxy->networks.front().network_key == "internal");  // the first step is limited

  // Without a public step, no open config; one allowlist, no per-allowlist configs.
  m.step_network_policies = {NetworkPolicy::kLimitedInternet, NetworkPolicy::kNoInternet};
  m.step_allowlists = {{"a.example"}, {}};
  auto q = plan(env);
  CHECK(q.allowlists.size() == 1);
  CHECK(q.squid_confs.empty());
  CHECK(q.squid_open_conf.empty());
}

TEST_CASE("per-phase policy: a runner open at setup and closed for the agent is planned on both networks, moved after setup") {
  auto env = env_with(NetworkPolicy::kNoInternet);
  env.manifest.setup_network_policy = NetworkPolicy::kFullInternet;
  CHECK(network_keys(env) == std::vector<std::string>{"internal", "net"});
  CHECK_FALSE(network_free(env));
  auto p = plan(env);
  REQUIRE(p.networks.size() == 2);
  CHECK(p.networks[0].internal);
  CHECK_FALSE(p.networks[1].internal);
  CHECK(p.runner_moves);
  CHECK(p.runner.networks.size() == 2);  // setup's, at create
  CHECK(runner_network_keys(p, NetworkPolicy::kFullInternet) == std::vector<std::string>{"internal", "net"});
  CHECK(runner_network_keys(p, NetworkPolicy::kNoInternet) == std::vector<std::string>{"internal"});
  CHECK(p.runner.networks[0].aliases == std::vector<std::string>{"runner"});
  // The runner keeps the trial's resolver throughout: Dns cannot change after create.
  REQUIRE(p.resolver.has_value());
  CHECK(p.runner.dns == std::vector<std::string>{p.resolver->networks.front().ipv4});
  REQUIRE(p.services.size() == 1);
  CHECK(p.services[0].networks[0].network_key == "internal");
  CHECK_FALSE(p.proxy.has_value());
  // The resolver follows the runner: open and on the outward network at setup, switched after.
  CHECK(p.resolver_switches);
  REQUIRE(p.resolver->networks.size() == 2);
  CHECK(p.resolver->networks[1].network_key == "net");
  CHECK(p.resolver->cmd->back() == "open");

  auto opens = env_with(NetworkPolicy::kFullInternet);
  opens.manifest.setup_network_policy = NetworkPolicy::kNoInternet;
  auto q = plan(opens);
  REQUIRE(q.runner.networks.size() == 1);  // closed at setup
  CHECK(q.runner.networks[0].network_key == "internal");
  CHECK(q.runner_moves);
  CHECK(q.resolver_switches);  // closed at setup: opened when the agent's phase begins
  REQUIRE(q.resolver->networks.size() == 1);
  CHECK(q.resolver->cmd->back() == "none");  // no name at setup: no_internet

  auto same = plan(env_with(NetworkPolicy::kNoInternet));
  CHECK_FALSE(same.runner_moves);
  CHECK(runner_network_keys(same, NetworkPolicy::kFullInternet) == std::vector<std::string>{"internal"});
}
