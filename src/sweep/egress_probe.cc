// The enforcement probe: a probe stack per closed policy, three checks from its runner.
#include "sweep/egress_probe.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "core/parallel.h"
#include "core/scope_guard.h"
#include "core/strings.h"
#include "engine/exec.h"
#include "engine/networks.h"
#include "manifest/stacks.h"
#include "policy/topology.h"
#include "stack/teardown.h"
#include "stack/up.h"
#include "manifest/harbor/harbor_load.h"
#include "trial/enforced_networks.h"
#include "trial/local_trial.h"

namespace forge::sweep {

namespace {

constexpr const char* kCheckName = "unlisted name refused";
constexpr const char* kCheckInternal = "network internal";
constexpr const char* kCheckHost = "host unreachable";
// A connection the host accepts is made in well under a millisecond on the same machine; the
// script waits this long after starting them before it exits (and its helper kills them).
constexpr const char* kConnectWait = "0.1";
constexpr Millis kExecTimeout{8000};
constexpr std::size_t kObservedCap = 300;

std::string capped(std::string s) {
  s = trim(s);
  if (s.size() > kObservedCap) s = s.substr(0, kObservedCap) + "…";
  return s;
}

// The text after "key:" on the output's line that starts with it; nullopt: no such line.
std::optional<std::string> line_value(std::string_view out, std::string_view key) {
  std::size_t at = 0;
  while (at < out.size()) {
    std::size_t end = out.find('\n', at);
    if (end == std::string_view::npos) end = out.size();
    std::string_view line = out.substr(at, end - at);
    if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == ':')
      return std::string(line.substr(key.size() + 1));
    at = end + 1;
  }
  return std::nullopt;
}

// A TCP listener on every address of this host, on an ephemeral port, recording the local
// address of each connection it accepts (which of the host's addresses the probe reached).
class HostListener {
 public:
  HostListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0 || ::listen(fd_, 16) != 0) {
      ::close(fd_);
      fd_ = -1;
      return;
    }
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  HostListener(const HostListener&) = delete;
  HostListener& operator=(const HostListener&) = delete;
  ~HostListener() {
    if (fd_ < 0) return;
    ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  std::vector<std::string> reached() {
    std::lock_guard lock(mu_);
    return reached_;
  }

 private:
  void serve() {
    for (;;) {
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) {
        if (errno == EINTR) continue;
        return;
      }
      sockaddr_in local{};
      socklen_t len = sizeof local;
      char ip[INET_ADDRSTRLEN] = "?";
      if (::getsockname(c, reinterpret_cast<sockaddr*>(&local), &len) == 0)
        ::inet_ntop(AF_INET, &local.sin_addr, ip, sizeof ip);
      ::close(c);
      std::lock_guard lock(mu_);
      if (reached_.size() < 64) reached_.push_back(ip);
    }
  }
  int fd_ = -1, port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> reached_;
};

// The host's first IPv4 address outside loopback and the daemon's bridges: what a container that
// found a way out of its network would reach the host by.
std::string host_primary_address() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return {};
  std::string found;
  for (ifaddrs* i = list; i && found.empty(); i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !i->ifa_name) continue;
    std::string_view name = i->ifa_name;
    if (name == "lo" || name.starts_with("docker") || name.starts_with("br-") || name.starts_with("veth")) continue;
    char ip[INET_ADDRSTRLEN];
    if (::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, ip, sizeof ip)) found = ip;
  }
  ::freeifaddrs(list);
  return found;
}

manifest::LoadedEnvironment probe_environment(manifest::NetworkPolicy policy, const std::string& listed_name) {
  manifest::LoadedEnvironment env;
  env.source = "builtin:egress-probe";
  env.task_id = "egress-probe";
  env.manifest.network_policy = policy;
  env.manifest.stack = "none";
  if (policy == manifest::NetworkPolicy::kLimitedInternet) env.manifest.allowlist = {listed_name};
  env.compose = *manifest::builtin_stack("none");
  return env;
}

// The runner's network: the internal one the stack's plan made.
const policy::NetworkPlan* task_network(const stack::UpResult& up) {
  for (const auto& n : up.plan.networks)
    if (n.internal) return &n;
  return nullptr;
}

}  // namespace

std::vector<manifest::NetworkPolicy> policies_to_probe(const std::vector<manifest::TaskConfig>& tasks,
                                                       bool harbor_shared_verifier) {
  std::set<std::string> names;
  for (const auto& t : tasks) {
    // The runner's stack: probed when it has a network (a network-free stack has none to hold).
    if (!trial::runs_locally(t) && !policy::network_free(t.environment))
      for (auto p : {manifest::NetworkPolicy::kNoInternet, manifest::NetworkPolicy::kLimitedInternet})
        if (manifest::runner_ever(t.environment.manifest, p)) names.insert(manifest::policy_name(p));
    // A grader's own network: a Harbor verifier's (a shared verifier is the runner's, above) or
    // a task.yaml's `grade:` ("none" when it has none, which no policy here matches).
    if (!t.harbor || !(harbor_shared_verifier && manifest::shared_verifier_applies(*t.harbor)))
      names.insert(trial::enforced_networks(t, harbor_shared_verifier).grade.policy);
  }
  std::vector<manifest::NetworkPolicy> out;
  for (auto p : {manifest::NetworkPolicy::kNoInternet, manifest::NetworkPolicy::kLimitedInternet})
    if (names.count(manifest::policy_name(p))) out.push_back(p);
  return out;
}

std::string probe_script(const ProbeTargets& t) {
  std::string s;
  for (const auto& a : t.host_addresses)
    s += "nc " + a + " " + std::to_string(t.port) + " </dev/null >/dev/null 2>&1 &\n";
  // Up to 3 tries of 1 s: the resolver may still be binding when the probe starts.
  s += "for i in 1 2 3; do d=$(timeout 1 nslookup " + t.name +
       " 2>&1 | tr '\\n' ' '); case \"$d\" in *REFUSED*) break;; esac; sleep 0.2; done\n";
  s += "echo \"dns:$d\"\n";
  if (!t.host_addresses.empty()) s += "sleep " + std::string(kConnectWait) + "\n";
  return s;
}

std::vector<results::ProbeCheck> judge_probe(std::string_view output, const std::vector<std::string>& reached,
                                             const ProbeTargets& t) {
  std::vector<results::ProbeCheck> checks;
  auto dns = line_value(output, "dns");
  if (dns && dns->find("REFUSED") != std::string::npos)
    checks.push_back({kCheckName, true, t.name + " refused by the trial's resolver"});
  else
    checks.push_back({kCheckName, false, "looking up " + t.name + " gave: " + capped(dns ? *dns : std::string(output))});
  if (!t.host_skipped.empty()) {
    checks.push_back({kCheckHost, true, "skipped: " + t.host_skipped});
  } else if (reached.empty()) {
    checks.push_back({kCheckHost, true, "no connection to forgectl's listener on " + join(t.host_addresses, ", ") +
                                            " port " + std::to_string(t.port)});
  } else {
    checks.push_back({kCheckHost, false, "the probe connected to forgectl's listener on this host at " +
                                             join(reached, ", ") + " port " + std::to_string(t.port) +
                                             " (the host firewall did not close the host to the task network)"});
  }
  return checks;
}

results::ProbeCheck judge_network(const std::string& network, const Result<bool>& internal) {
  if (!internal) return {kCheckInternal, false, "inspecting network " + network + ": " + internal.error().what()};
  if (!*internal)
    return {kCheckInternal, false, "the daemon reports network " + network + " as not internal (it ignored the flag)"};
  return {kCheckInternal, true, "the daemon keeps network " + network + " internal (no forwarding off the bridge)"};
}

results::ProbeRecord probe_policy(engine::Client& c, manifest::NetworkPolicy policy, const ProbeOptions& o) {
  auto start = Clock::now();
  results::ProbeRecord rec;
  rec.policy = manifest::policy_name(policy);
  rec.engine = o.engine;
  auto finish = [&]() -> results::ProbeRecord {
    rec.took_ms = elapsed_since(start).count();
    rec.passed = rec.error.empty() && !rec.checks.empty() &&
                 std::all_of(rec.checks.begin(), rec.checks.end(), [](const auto& ch) { return ch.passed; });
    return rec;
  };

  const std::string listed = "probe.forgectl.invalid";
  stack::UpOptions up;
  up.host = o.host;
  up.mode = stack::OwnerMode::kAttached;
  up.lease = std::chrono::seconds(600);
  up.run_id = o.run_id;
  up.interrupted = o.interrupted;
  up.omit_unused_network = false;  // the network is what is probed
  up.health_timeout = Millis(30000);
  auto stack = stack::up_stack(c, probe_environment(policy, listed), up);
  if (!stack) {
    rec.error = stack.error().what();
    return finish();
  }
  ScopeGuard down([&] { (void)stack::remove_stack(c, stack->name); });

  HostListener listener;
  ProbeTargets t;
  t.port = listener.port();
  t.name = "fg" + random_hex(6) + ".unlisted.invalid";
  if (!o.host.host_firewall)
    t.host_skipped = "FORGECTL_HOST_FIREWALL=off (the host is not closed to task networks)";
  else if (!c.transport().is_local())
    t.host_skipped = "the daemon is not on this host";
  else if (t.port == 0)
    t.host_skipped = "no listener could be opened on this host";
  if (t.host_skipped.empty()) {
    if (const auto* net = task_network(*stack)) t.host_addresses.push_back(net->subnet.gateway());
    if (auto primary = host_primary_address(); !primary.empty()) t.host_addresses.push_back(primary);
  }
  engine::ExecOptions ex{{"sh", "-c", probe_script(t)}};
  ex.helper = engine::kExecHelperPath;
  ex.timeout = kExecTimeout;
  ex.cancel = o.interrupted;
  auto ran = engine::exec_run(c, stack->containers.at(policy::kRunnerKey), ex);
  if (!ran) {
    rec.error = "running the probe in its runner: " + ran.error().what();
    return finish();
  }
  if (ran->timed_out) {
    rec.error = "the probe's checks did not finish within " + std::to_string(kExecTimeout.count() / 1000) +
                " s in its runner (output: " + capped(ran->out) + ")";
    return finish();
  }
  rec.checks = judge_probe(ran->out, listener.reached(), t);
  const auto* net = task_network(*stack);
  Result<bool> internal = fail(Errc::kNotFound, "the probe stack has no task network");
  if (net) {
    auto info = engine::inspect_network(c, net->name);
    internal = info ? Result<bool>(info->internal) : Result<bool>(info.fail());
  }
  rec.checks.insert(rec.checks.begin() + 1, judge_network(net ? net->name : "?", internal));
  return finish();
}

std::vector<results::ProbeRecord> probe_policies(engine::Client& c, const std::vector<manifest::NetworkPolicy>& policies,
                                                 const ProbeOptions& o) {
  std::vector<results::ProbeRecord> out(policies.size());
  parallel_for(policies.size(), [&](std::size_t i) { out[i] = probe_policy(c, policies[i], o); });
  return out;
}

std::string probe_failure(const std::vector<results::ProbeRecord>& records) {
  for (const auto& r : records) {
    if (r.passed) continue;
    std::string head = "the " + r.policy + " enforcement probe failed on " + r.engine + ": ";
    if (!r.error.empty()) return head + r.error;
    for (const auto& ch : r.checks)
      if (!ch.passed) return head + ch.name + ": " + ch.observed;
    return head + "no check ran";
  }
  return {};
}

}  // namespace forge::sweep
