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

// The resolver's mode for a phase, as its log line words it (forgectl serve dns --mode).
const char* resolver_mode_for(manifest::NetworkPolicy p) {
  switch (p) {
    case manifest::NetworkPolicy::kFullInternet: return "open";
    case manifest::NetworkPolicy::kLimitedInternet: return "allowlist";
    case manifest::NetworkPolicy::kNoInternet: return "none";
  }
  return "none";
}

// The signal that switches the resolver to `mode` (services/dns_server.h).
const char* resolver_signal(std::string_view mode) {
  return mode == "open" ? "SIGUSR2" : mode == "allowlist" ? "SIGUSR1" : "SIGHUP";
}

// The word of the resolver's last "resolver mode: WORD (…)" line on stderr; empty: none yet.
Result<std::string> resolver_mode(engine::Client& c, const std::string& id) {
  auto logs = engine::container_logs(c, id, std::nullopt, false);  // its queries are on stdout
  if (!logs) return logs.fail();
  const auto at = logs->err.rfind("resolver mode: ");
  if (at == std::string::npos) return std::string();
  const auto from = at + 15;
  return logs->err.substr(from, logs->err.find_first_of(" \n", from) - from);
}

std::string outward_network(const stack::UpResult& up) {
  for (const auto& n : up.plan.networks)
    if (n.key == "net") return n.name;
  return {};
}

// The resolver as the phase has it (StackPlan::resolver_switches): on the outward network and
// answering every name in a full_internet phase, off it in the others, answering the allowlist's
// names or none. The switch is a signal; its taking effect is proved by the resolver's own line.
Status switch_resolver(engine::Client& c, const stack::UpResult& up, manifest::NetworkPolicy policy, Millis timeout) {
  auto it = up.containers.find(policy::kResolverKey);
  if (!up.plan.resolver_switches || it == up.containers.end()) return {};
  const std::string& id = it->second;
  const std::string net = outward_network(up);
  const std::string want = resolver_mode_for(policy);
  const bool open = want == "open";
  auto info = engine::inspect_container(c, id);
  if (!info) return info.fail_with("the resolver");
  const bool on_net = !net.empty() && info->networks.count(net) > 0;
  if (open && !on_net)
    if (auto st = engine::connect_network(c, net, id, {}); !st) return st.fail_with("the resolver");
  auto mode = resolver_mode(c, id);
  if (!mode) return mode.fail_with("the resolver");
  if (*mode != want) {
    if (auto st = engine::kill_container(c, id, resolver_signal(want)); !st) return st.fail_with("the resolver");
    const Deadline deadline = Deadline::in(timeout);
    while (*mode != want) {
      if (deadline.expired()) return fail(Errc::kTimeout, "the resolver did not say it was " + want);
      std::this_thread::sleep_for(Millis(20));
      mode = resolver_mode(c, id);
      if (!mode) return mode.fail_with("the resolver");
    }
  }
  if (!open && on_net)
    if (auto st = engine::disconnect_network(c, net, id, true); !st) return st.fail_with("the resolver");
  return {};
}

// The proxy on the task network (as its alias) exactly in a limited_internet phase
// (StackPlan::proxy_switches), proved by the daemon's inspect.
Status switch_proxy(engine::Client& c, const stack::UpResult& up, manifest::NetworkPolicy policy) {
  auto it = up.containers.find(policy::kProxyKey);
  if (!up.plan.proxy_switches || it == up.containers.end()) return {};
  const std::string& task_net = up.plan.networks.front().name;
  const bool want = policy == manifest::NetworkPolicy::kLimitedInternet;
  auto info = engine::inspect_container(c, it->second);
  if (!info) return info.fail_with("the proxy");
  const bool there = info->networks.count(task_net) > 0;
  Status st;
  if (want && !there) st = engine::connect_network(c, task_net, it->second, {policy::kProxyKey});
  if (!want && there) st = engine::disconnect_network(c, task_net, it->second, true);
  if (!st) return st.fail_with("the proxy");
  if (want == there) return {};
  auto after = engine::inspect_container(c, it->second);
  if (!after) return after.fail_with("the proxy");
  if ((after->networks.count(task_net) > 0) != want)
    return fail(Errc::kProtocol, std::string("the proxy is ") + (want ? "not" : "still") + " on the task network");
  return {};
}

}  // namespace

Status move_runner(engine::Client& c, const stack::UpResult& up, const std::string& runner,
                   manifest::NetworkPolicy policy, const std::string& who, Millis timeout) {
  const std::string what = "moving the runner to " + who + "'s network (" + manifest::policy_name(policy) + ")";
  const auto want = policy::runner_network_keys(up.plan, policy);
  const bool open = policy == manifest::NetworkPolicy::kFullInternet;
  const bool limited = policy == manifest::NetworkPolicy::kLimitedInternet;
  // Ways out close before the runner moves and open after its move is proved.
  if (!limited)
    if (auto st = switch_proxy(c, up, policy); !st) return st.fail_with(what);
  if (!open)
    if (auto st = switch_resolver(c, up, policy, timeout); !st) return st.fail_with(what);
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
    if (auto st = switch_resolver(c, up, policy, timeout); !st) return st.fail_with(what);
  if (limited)
    if (auto st = switch_proxy(c, up, policy); !st) return st.fail_with(what);
  return {};
}

}  // namespace forge::trial
