// Moving the runner between the setup and agent phases' networks, and proving where it is.
#include "trial/phase_network.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "core/strings.h"
#include "engine/containers.h"
#include "engine/exec.h"
#include "engine/networks.h"
#include "policy/topology.h"
#include "trial/egress_switch.h"

namespace forge::trial {

std::vector<std::uint32_t> default_gateways(std::string_view proc_net_route) {
  std::vector<std::uint32_t> out;
  std::istringstream in{std::string(proc_net_route)};
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line) && out.size() < 64) {
    std::istringstream f(line);
    std::string iface, dest, gateway;
    if (!(f >> iface >> dest >> gateway) || dest != "00000000" || gateway.size() != 8) continue;
    char* end = nullptr;
    auto raw = static_cast<std::uint32_t>(std::strtoul(gateway.c_str(), &end, 16));
    if (end == gateway.c_str() + 8) out.push_back(ntohl(raw));  // the kernel prints the address's raw bytes
  }
  return out;
}

namespace {

// The Docker network names the plan gives the runner during `phase`.
std::set<std::string> planned_names(const policy::StackPlan& plan, manifest::NetworkPolicy policy) {
  std::set<std::string> out;
  for (const auto& key : policy::runner_network_keys(plan, policy))
    for (const auto& n : plan.networks)
      if (n.key == key) out.insert(n.name);
  return out;
}

bool leads_out(const policy::StackPlan& plan, manifest::NetworkPolicy policy) {
  for (const auto& key : policy::runner_network_keys(plan, policy))
    if (key == "net") return true;
  return false;
}

// Whether a default route goes through a gateway on a network that is not internal.
bool routes_out(const policy::StackPlan& plan, const std::vector<std::uint32_t>& gateways) {
  for (auto g : gateways)
    for (const auto& n : plan.networks)
      if (!n.internal && n.subnet.overlaps(policy::Ipv4Net{g, 32})) return true;
  return false;
}

Status verify_runner(engine::Client& c, const stack::UpResult& up, const std::string& runner, manifest::NetworkPolicy policy,
                     Millis timeout) {
  auto info = engine::inspect_container(c, runner);
  if (!info) return info.fail();
  std::set<std::string> have;
  for (const auto& [name, ep] : info->networks) have.insert(name);
  const auto want = planned_names(up.plan, policy);
  if (have != want)
    return fail(Errc::kProtocol, "the runner is on " + join(std::vector<std::string>(have.begin(), have.end()), ", ") + ", not on " +
                                     join(std::vector<std::string>(want.begin(), want.end()), ", "));
  engine::ExecOptions o;
  o.cmd = {"cat", "/proc/net/route"};
  o.timeout = timeout;
  o.output_cap = 64 * 1024;
  auto r = engine::exec_run(c, runner, o);
  if (!r) return r.fail_with("reading the runner's routes");
  if (r->exit_code != 0 || r->timed_out)
    return fail(Errc::kProtocol, "reading the runner's routes: cat exited " + std::to_string(r->exit_code));
  const bool out = routes_out(up.plan, default_gateways(r->out));
  if (out != leads_out(up.plan, policy))
    return fail(Errc::kProtocol, std::string("inside the runner there is ") + (out ? "a" : "no") +
                                     " default route through the outward network, which " +
                                     manifest::policy_name(policy) + " does not give");
  return {};
}

}  // namespace

Status move_runner(engine::Client& c, const stack::UpResult& up, const std::string& runner, PhaseNet to,
                   const std::string& who, Millis timeout, ProxyState& proxy) {
  const manifest::NetworkPolicy policy = to.policy;
  const std::string what = "moving the runner to " + who + "'s network (" + manifest::policy_name(policy) + ")";
  const auto want = policy::runner_network_keys(up.plan, policy);
  const bool open = policy == manifest::NetworkPolicy::kFullInternet;
  // Ways out close before the runner moves and open after its move is proved.
  if (auto st = detach_proxy(c, up, to, proxy); !st) return st.fail_with(what);
  if (!open)
    if (auto st = switch_resolver(c, up, to, timeout); !st) return st.fail_with(what);
  auto info = engine::inspect_container(c, runner);
  if (!info) return info.fail_with(what);
  for (const auto& n : up.plan.networks) {
    const bool wanted = std::find(want.begin(), want.end(), n.key) != want.end();
    const bool there = info->networks.count(n.name) > 0;
    Status st;
    if (wanted && !there) {
      // The runner's name on the task network, as at create; on the way out it needs none.
      std::vector<std::string> aliases;
      for (const auto& a : up.plan.runner.networks)
        if (a.network_key == n.key) aliases = a.aliases;
      if (aliases.empty() && n.internal) aliases = {policy::kRunnerKey};
      st = engine::connect_network(c, n.name, runner, aliases);
    } else if (!wanted && there) {
      st = engine::disconnect_network(c, n.name, runner, true);
    }
    if (!st) return st.fail_with(what + ": network '" + n.name + "'");
  }
  if (auto st = verify_runner(c, up, runner, policy, timeout); !st) return st.fail_with(what);
  if (open)
    if (auto st = switch_resolver(c, up, to, timeout); !st) return st.fail_with(what);
  if (auto st = attach_proxy(c, up, to, proxy, Deadline::in(timeout)); !st) return st.fail_with(what);
  return {};
}

}  // namespace forge::trial
