// Reading the trial's egress ledger from the daemon.
#include "trial/egress_use.h"

#include <algorithm>

#include "engine/containers.h"
#include "engine/networks.h"

namespace forge::trial {

namespace {

// Each address on the task network → the plan key of the container holding it ("runner",
// a service, "browser"); the stack's name prefix is taken off the container's name.
std::map<std::string, std::string> who_by_address(engine::Client& c, const stack::UpResult& up) {
  std::map<std::string, std::string> who;
  if (up.plan.networks.empty()) return who;
  auto it = up.networks.find(up.plan.networks.front().key);
  if (it == up.networks.end()) return who;
  auto net = engine::inspect_network(c, it->second);
  if (!net) return who;  // sources then stay addresses: the ledger is still whole
  const std::string prefix = up.name + "-";
  for (const auto& [id, ep] : net->containers) {
    std::string ip = ep.ipv4_address.substr(0, ep.ipv4_address.find('/'));
    who[ip] = ep.name.rfind(prefix, 0) == 0 ? ep.name.substr(prefix.size()) : ep.name;
  }
  return who;
}

// The log lines read: the ledger keeps kMaxEgressEntries, the resolver logs at most twice that
// (and the running count of the rest); past this, what came before is lost, never read whole.
constexpr int kLogTail = 2 * static_cast<int>(kMaxEgressEntries) + 1;

// The container's stdout, its last kLogTail lines; `cut` when there may have been more.
Result<std::string> stdout_of(engine::Client& c, const stack::UpResult& up, const char* key, bool& cut) {
  auto it = up.containers.find(key);
  if (it == up.containers.end()) return std::string();
  auto logs = engine::container_logs(c, it->second, kLogTail);
  if (!logs) return logs.fail_with(std::string("reading the egress ledger from the ") + key);
  cut = std::count(logs->out.begin(), logs->out.end(), '\n') + std::count(logs->err.begin(), logs->err.end(), '\n') >=
        kLogTail;
  return std::move(logs->out);
}

}  // namespace

const char* ledger_phase(std::string_view step) {
  if (step == "reserve" || step == "up" || step == "setup" || step == "healthcheck" || step == "tools") return "setup";
  if (step == "agent") return "agent";
  if (step == "grade") return "grade";
  return nullptr;
}

Result<std::optional<EgressLedger>> read_egress_ledger(engine::Client& c, const stack::UpResult& up,
                                                       const std::vector<policy::PhaseMark>& marks) {
  if (!up.plan.resolver && !up.plan.proxy) return std::optional<EgressLedger>{};
  policy::EgressLogs logs;
  bool resolver_cut = false, proxy_cut = false;
  auto resolver = stdout_of(c, up, policy::kResolverKey, resolver_cut);
  if (!resolver) return resolver.fail();
  auto proxy = stdout_of(c, up, policy::kProxyKey, proxy_cut);
  if (!proxy) return proxy.fail();
  logs.resolver = std::move(*resolver);
  logs.proxy = std::move(*proxy);
  EgressLedger l = policy::egress_ledger(logs, marks, who_by_address(c, up));
  // Lines before the tail were lost unread: at least one entry, so rules that must see every
  // request fail closed (grading/egress_rules.h).
  l.dropped += (resolver_cut ? 1 : 0) + (proxy_cut ? 1 : 0);
  return std::optional<EgressLedger>(std::move(l));
}

}  // namespace forge::trial
