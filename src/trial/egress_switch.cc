// Switching the trial's resolver and egress proxy with the runner's phase.
#include "trial/egress_switch.h"

#include <thread>

#include "engine/containers.h"
#include "engine/networks.h"
#include "policy/topology.h"
#include "stack/proxy_config.h"

namespace forge::trial {

namespace {

// The resolver's mode for a phase, as its log line words it (forgectl serve dns).
std::string resolver_mode_for(PhaseNet to) {
  switch (to.policy) {
    case manifest::NetworkPolicy::kFullInternet: return "open";
    case manifest::NetworkPolicy::kLimitedInternet:
      return to.allowlist == 0 ? "allowlist" : "allowlist-" + std::to_string(to.allowlist);
    case manifest::NetworkPolicy::kNoInternet: return "none";
  }
  return "none";
}

// The signal that switches the resolver to the phase's mode (services/dns_server.h).
std::string resolver_signal(PhaseNet to) {
  switch (to.policy) {
    case manifest::NetworkPolicy::kFullInternet: return "SIGUSR2";
    case manifest::NetworkPolicy::kLimitedInternet:
      return to.allowlist == 0 ? "SIGUSR1" : "SIGRTMIN+" + std::to_string(to.allowlist);
    case manifest::NetworkPolicy::kNoInternet: return "SIGHUP";
  }
  return "SIGHUP";
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

// Whether the phase has the proxy on the task network, and with which config.
bool proxy_wanted(const stack::UpResult& up, PhaseNet to) {
  return to.policy == manifest::NetworkPolicy::kLimitedInternet ||
         (to.policy == manifest::NetworkPolicy::kFullInternet && !up.plan.squid_open_conf.empty());
}

int proxy_conf_for(PhaseNet to) {
  return to.policy == manifest::NetworkPolicy::kLimitedInternet ? to.allowlist : kOpenProxy;
}

const std::string& conf_text(const stack::UpResult& up, int conf) {
  if (conf == kOpenProxy) return up.plan.squid_open_conf;
  return up.plan.squid_confs.empty() ? up.plan.squid_conf : up.plan.squid_confs.at(static_cast<std::size_t>(conf));
}

// The proxy's id when the trial switches it; empty otherwise.
std::string switched_proxy(const stack::UpResult& up) {
  auto it = up.containers.find(policy::kProxyKey);
  return up.plan.proxy_switches && it != up.containers.end() ? it->second : std::string();
}

Result<bool> on_task_network(engine::Client& c, const stack::UpResult& up, const std::string& id) {
  auto info = engine::inspect_container(c, id);
  if (!info) return info.fail_with("the proxy");
  return info->networks.count(up.plan.networks.front().name) > 0;
}

}  // namespace

Status switch_resolver(engine::Client& c, const stack::UpResult& up, PhaseNet to, Millis timeout) {
  auto it = up.containers.find(policy::kResolverKey);
  if (!up.plan.resolver_switches || it == up.containers.end()) return {};
  const std::string& id = it->second;
  const std::string net = outward_network(up);
  const std::string want = resolver_mode_for(to);
  const bool open = want == "open";
  auto info = engine::inspect_container(c, id);
  if (!info) return info.fail_with("the resolver");
  const bool on_net = !net.empty() && info->networks.count(net) > 0;
  if (open && !on_net)
    if (auto st = engine::connect_network(c, net, id, {}); !st) return st.fail_with("the resolver");
  auto mode = resolver_mode(c, id);
  if (!mode) return mode.fail_with("the resolver");
  if (*mode != want) {
    if (auto st = engine::kill_container(c, id, resolver_signal(to)); !st) return st.fail_with("the resolver");
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

Status detach_proxy(engine::Client& c, const stack::UpResult& up, PhaseNet to, ProxyState& state) {
  const std::string id = switched_proxy(up);
  if (id.empty()) return {};
  if (proxy_wanted(up, to) && state.conf == proxy_conf_for(to)) return {};  // the phase keeps it as it is
  auto there = on_task_network(c, up, id);
  if (!there) return there.fail();
  if (!*there) return {};
  if (auto st = engine::disconnect_network(c, up.plan.networks.front().name, id, true); !st)
    return st.fail_with("the proxy");
  auto after = on_task_network(c, up, id);
  if (!after) return after.fail();
  if (*after) return fail(Errc::kProtocol, "the proxy is still on the task network");
  return {};
}

Status attach_proxy(engine::Client& c, const stack::UpResult& up, PhaseNet to, ProxyState& state, Deadline deadline) {
  const std::string id = switched_proxy(up);
  if (id.empty() || !proxy_wanted(up, to)) return {};
  if (const int conf = proxy_conf_for(to); conf != state.conf) {
    if (auto st = stack::reconfigure_proxy(c, id, conf_text(up, conf), deadline); !st) return st;
    state.conf = conf;
  }
  auto there = on_task_network(c, up, id);
  if (!there) return there.fail();
  if (*there) return {};
  if (auto st = engine::connect_network(c, up.plan.networks.front().name, id, {policy::kProxyKey}); !st)
    return st.fail_with("the proxy");
  auto after = on_task_network(c, up, id);
  if (!after) return after.fail();
  if (!*after) return fail(Errc::kProtocol, "the proxy is not on the task network");
  return {};
}

}  // namespace forge::trial
