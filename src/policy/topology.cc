// Network posture → topology.
#include "policy/topology.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "core/strings.h"
#include "policy/allowlist.h"
#include "policy/squid_conf.h"

namespace forge::policy {

using manifest::NetworkPolicy;

std::vector<std::string> network_keys(NetworkPolicy p) {
  switch (p) {
    case NetworkPolicy::kNoInternet: return {"internal"};
    case NetworkPolicy::kLimitedInternet: return {"internal", "edge"};
    case NetworkPolicy::kFullInternet: return {"net"};
  }
  return {"internal"};
}

namespace {

std::size_t upstream_count(const manifest::LoadedEnvironment& env) {
  return static_cast<std::size_t>(std::count_if(env.compose.services.begin(), env.compose.services.end(),
                                                [](const manifest::ComposeService& s) { return s.upstream; }));
}

}  // namespace

std::vector<std::string> network_keys(const manifest::LoadedEnvironment& env) {
  const auto& m = env.manifest;
  const bool limited = manifest::runner_ever(m, NetworkPolicy::kLimitedInternet);
  std::vector<std::string> keys = network_keys(m.network_policy);
  if (manifest::runner_changes_network(m)) {  // a runner that moves: the task network, and what its phases need
    keys = {"internal"};
    if (limited) keys.push_back("edge");
    if (manifest::runner_ever(m, NetworkPolicy::kFullInternet)) keys.push_back("net");
  }
  if (limited && upstream_count(env) > 0) keys.push_back("upstream");
  return keys;
}

bool network_free(const manifest::LoadedEnvironment& env) {
  return env.manifest.network_policy == NetworkPolicy::kNoInternet && !manifest::runner_changes_network(env.manifest) &&
         env.compose.services.empty();
}

std::vector<int> network_prefixes(const manifest::LoadedEnvironment& env) {
  // Services, the runner, a proxy and the resolver share the task network; the edge holds the
  // proxy and the resolver, the upstream network the proxy and the upstreams (a /29 has room for 5).
  int members = static_cast<int>(env.compose.services.size()) + 3;
  int upstream_members = static_cast<int>(upstream_count(env)) + 1;
  std::vector<int> out;
  for (const auto& key : network_keys(env))
    out.push_back(key == "edge"       ? 29
                  : key == "upstream" ? (upstream_members <= 5 ? 29 : prefix_for(upstream_members))
                                      : prefix_for(members));
  return out;
}

namespace {

// The proxy variables emptied, for a setup script run outside limited_internet in a runner whose
// agent phase has them: an empty variable is no proxy to curl, Python, pip, apt and wget.
std::vector<std::string> proxy_env_cleared() {
  return {"HTTP_PROXY=", "HTTPS_PROXY=", "http_proxy=", "https_proxy=", "NO_PROXY=*", "no_proxy=*"};
}

std::vector<std::string> proxy_env(const std::vector<std::string>& no_proxy_names) {
  std::string url = "http://" + std::string(kProxyAlias) + ":" + std::to_string(kProxyPort);
  std::vector<std::string> names{"localhost", "127.0.0.1", "::1"};
  names.insert(names.end(), no_proxy_names.begin(), no_proxy_names.end());
  std::string no_proxy = join(names, ",");
  // Both cases: curl reads only the lower-case http_proxy; others read the upper-case names.
  return {"HTTP_PROXY=" + url, "HTTPS_PROXY=" + url, "http_proxy=" + url, "https_proxy=" + url,
          "NO_PROXY=" + no_proxy, "no_proxy=" + no_proxy};
}

Result<std::vector<std::string>> passthrough(const std::vector<std::string>& names, const PlanOptions& opts,
                                             const std::string& who) {
  std::vector<std::string> out;
  for (const auto& n : names) {
    auto v = opts.host_env ? opts.host_env(n) : std::nullopt;
    if (!v) return fail(Errc::kInvalid, who + ": env_passthrough names " + n + ", which is not set on the host");
    out.push_back(n + "=" + *v);
  }
  return out;
}

// Whether the allowlist (normalised: lower case, ".suffix" for a domain and its subdomains) admits `name`.
bool allowlisted(const std::string& name, const std::vector<std::string>& allowlist) {
  std::string n = to_lower(name);
  for (const auto& a : allowlist)
    if (n == a || (a.front() == '.' && (n == a.substr(1) || n.ends_with(a)))) return true;
  return false;
}

std::string bridge_name(const std::string& stack, const std::string& key) {
  // Linux limits interface names to 15 characters; derive a stable, unique-enough one.
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over "<stack>/<key>"
  for (char c : stack + "/" + key) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "fg";
  for (int i = 0; i < 11; ++i) out += kHex[(h >> (4 * i)) & 15];
  return out;
}

// The allowlists the runner's limited_internet phases use, normalised: the manifest's first, then
// each Harbor step's own that differs.
Result<std::vector<std::vector<std::string>>> allowlist_sets(const manifest::EnvironmentManifest& m) {
  std::vector<std::vector<std::string>> sets;
  auto first = normalise_allowlist(m.allowlist);
  if (!first) return first.fail_with(m.path + ": limited_internet_allowlist");
  sets.push_back(std::move(*first));
  for (std::size_t i = 0; i < m.step_allowlists.size() && i < m.step_network_policies.size(); ++i) {
    if (m.step_network_policies[i] != NetworkPolicy::kLimitedInternet) continue;
    auto set = normalise_allowlist(m.step_allowlists[i]);
    if (!set) return set.fail_with(m.path + ": step " + std::to_string(i + 1) + "'s allowed_hosts");
    if (std::find(sets.begin(), sets.end(), *set) == sets.end()) sets.push_back(std::move(*set));
  }
  if (sets.size() > kMaxAllowlists)
    return fail(Errc::kInvalid, m.path + ": the steps have " + std::to_string(sets.size()) +
                                    " different allowlists; forgectl switches between at most " +
                                    std::to_string(kMaxAllowlists));
  return sets;
}

// One of forgectl's own containers in the stack (the resolver, the proxy): named after its key.
ContainerPlan own_container(const StackPlan& plan, const char* key, Role role, std::string image, Hardening hardening) {
  ContainerPlan c;
  c.key = key;
  c.role = role;
  c.name = plan.name + "-" + key;
  c.image = std::move(image);
  c.hardening = std::move(hardening);
  return c;
}

// The trial's resolver: on the task network at the subnet's last address; under limited_internet
// also on the edge, to look up the allowlist's exact names (a ".domain" entry answers the domain
// itself, never a subdomain: the label would be the agent's).
ContainerPlan resolver_plan(const StackPlan& plan, const std::string& task_net, bool allow_private, bool limited) {
  ContainerPlan r = own_container(plan, kResolverKey, Role::kResolver, kResolverImage, resolver_hardening());
  std::vector<std::string> cmd{"forgectl", "serve", "dns", "--port", "53"};
  // The first allowlist's names as they are, another's as "K:name" (serve dns switches by K).
  bool any = false;
  for (std::size_t k = 0; k < plan.allowlists.size(); ++k)
    for (const auto& a : plan.allowlists[k]) {
      std::string name = (k ? std::to_string(k) + ":" : "") + (a.front() == '.' ? a.substr(1) : a);
      if (std::find(cmd.begin(), cmd.end(), name) == cmd.end()) cmd.insert(cmd.end(), {"--allow", name});
      any = true;
    }
  if (allow_private && any) cmd.push_back("--allow-private");
  r.cmd = cmd;
  r.networks = {{task_net, {kResolverKey}, plan.networks.front().subnet.last_host()}};
  if (limited) r.networks.push_back({"edge", {}, ""});
  return r;
}

// Whether the agent's processes get the proxy variables from the runner's environment (create's):
// its phase, or one Harbor step, is limited_internet.
bool agent_has_proxy(const manifest::EnvironmentManifest& m) {
  const auto& steps = m.step_network_policies;
  return m.network_policy == NetworkPolicy::kLimitedInternet ||
         std::count(steps.begin(), steps.end(), NetworkPolicy::kLimitedInternet) > 0;
}

// The egress proxy of a stack whose runner is ever limited_internet, and its squid.conf: the first
// allowlist's, each allowlist's when the phases switch between them, and an open one for a
// full_internet phase of a runner that keeps the proxy variables (a Harbor public step beside
// allowlist steps).
void plan_proxy(StackPlan& plan, const manifest::EnvironmentManifest& m, const std::string& image, bool agent_proxied) {
  const bool changes = manifest::runner_changes_network(m);
  ContainerPlan p = own_container(plan, kProxyKey, Role::kProxy, image, proxy_hardening());
  // On the task network only while the runner is limited_internet: in a stack whose runner moves,
  // the trial attaches it for those phases and detaches it for the others.
  p.networks = {{"edge", {}}};
  if (!changes || manifest::phase_policy(m, manifest::Phase::kSetup) == NetworkPolicy::kLimitedInternet)
    p.networks.insert(p.networks.begin(), {plan.networks.front().key, {kProxyKey}});
  plan.proxy_switches = changes;
  SquidOptions so;
  so.internal_subnet = plan.networks.front().subnet.str();
  so.allowlist = plan.allowlists.front();
  so.deny_private = !m.allow_private;
  so.allow_plain_http = m.allow_plain_http;
  so.connect_ports = m.connect_ports;
  for (const auto& n : plan.networks)
    if (n.key == "upstream") {
      p.networks.push_back({"upstream", {}});
      so.upstream_subnet = n.subnet.str(), so.upstream_gateway = n.subnet.gateway();
    }
  p.volumes = {"/etc/squid"};  // the config goes in through the archive API before start
  plan.proxy = std::move(p);
  plan.squid_conf = squid_conf(so);
  for (std::size_t k = 0; plan.allowlists.size() > 1 && k < plan.allowlists.size(); ++k) {
    so.allowlist = plan.allowlists[k];
    plan.squid_confs.push_back(squid_conf(so));
  }
  const auto& steps = m.step_network_policies;
  if (agent_proxied && std::count(steps.begin(), steps.end(), NetworkPolicy::kFullInternet) > 0) {
    so.open = true;
    plan.squid_open_conf = squid_conf(so);
  }
}

// A limited_internet stack whose runner never moves: the resolver runs in the proxy's network
// namespace, which has the two networks it needs (the task network, the edge), so up makes one
// network sandbox (veths, addresses, Docker's DNS rules) less. The proxy takes the resolver's
// address and name on the task network; the resolver stays a container of its own (its user, its
// hardening, its log, its signals). Not for a stack whose runner moves: the proxy then leaves the
// task network between phases and the resolver must not.
void share_proxy_netns(StackPlan& plan) {
  auto& task = plan.proxy->networks.front();
  const auto& own = plan.resolver->networks.front();
  task.ipv4 = own.ipv4;
  task.aliases.insert(task.aliases.end(), own.aliases.begin(), own.aliases.end());
  plan.resolver->networks.clear();
  plan.resolver->netns_of = kProxyKey;
}

}  // namespace

int allowlist_index(const StackPlan& plan, const std::vector<std::string>& allowlist) {
  auto norm = normalise_allowlist(allowlist);
  if (!norm) return -1;
  auto it = std::find(plan.allowlists.begin(), plan.allowlists.end(), *norm);
  return it == plan.allowlists.end() ? -1 : static_cast<int>(it - plan.allowlists.begin());
}

std::vector<std::string> runner_network_keys(const StackPlan& plan, NetworkPolicy policy) {
  if (plan.runner_moves) {
    std::vector<std::string> keys{plan.networks.front().key};  // the task network: services, resolver
    if (policy == NetworkPolicy::kFullInternet) keys.push_back("net");
    return keys;
  }
  std::vector<std::string> keys;
  for (const auto& a : plan.runner.networks) keys.push_back(a.network_key);
  return keys;
}

bool parse_user_ids(const std::string& user, unsigned& uid, unsigned& gid) {
  if (user.empty() || user.size() > 21) return false;
  auto colon = user.find(':');
  char* end = nullptr;
  unsigned long u = std::strtoul(user.c_str(), &end, 10);
  if (end != user.c_str() + (colon == std::string::npos ? user.size() : colon)) return false;
  unsigned long g = u;
  if (colon != std::string::npos) {
    g = std::strtoul(user.c_str() + colon + 1, &end, 10);
    if (end != user.c_str() + user.size() || colon + 1 == user.size()) return false;
  }
  uid = static_cast<unsigned>(u), gid = static_cast<unsigned>(g);
  return true;
}

bool is_own_runner_image(std::string_view image) { return image == kDefaultRunnerImage; }

Result<StackPlan> plan_stack(const manifest::LoadedEnvironment& env, const PlanOptions& opts,
                             const std::vector<Ipv4Net>& subnets) {
  const auto& m = env.manifest;
  StackPlan plan;
  plan.name = opts.stack_name;
  plan.policy = m.network_policy;
  auto keys = opts.omit_unused_network && network_free(env) ? std::vector<std::string>{} : network_keys(env);
  if (subnets.size() != keys.size())
    return fail(Errc::kInvalid, "planning stack '" + plan.name + "': " + std::to_string(keys.size()) + " subnets needed");
  for (std::size_t i = 0; i < keys.size(); ++i)
    plan.networks.push_back({keys[i], plan.name + "-" + keys[i], keys[i] != "edge" && keys[i] != "net", subnets[i],
                             bridge_name(plan.name, keys[i])});
  const bool networked = !keys.empty();
  const std::string task_net = networked ? keys.front() : std::string();
  const bool changes = manifest::runner_changes_network(m);
  // A runner that is ever closed keeps the trial's resolver throughout: HostConfig.Dns is fixed at create.
  bool closed = networked && (m.network_policy != NetworkPolicy::kFullInternet || changes);
  const bool limited = manifest::runner_ever(m, NetworkPolicy::kLimitedInternet);
  const NetworkPolicy setup = manifest::phase_policy(m, manifest::Phase::kSetup);
  // The agent's processes get the proxy variables from the runner's environment (create's): a
  // task whose agent phase, or one Harbor step, is limited_internet.
  const bool agent_proxied = agent_has_proxy(m);

  // Every name a container answers to on the task network: services, their aliases, the runner.
  // An upstream's names are on the upstream network only, where just the proxy resolves them.
  std::vector<std::string> names;
  std::set<std::string> taken{kRunnerKey, kProxyKey};
  for (const auto& svc : env.compose.services) {
    const std::string at = env.compose.path + ":" + std::to_string(svc.where.line) + ": ";
    if (svc.name == kRunnerKey || svc.name == kProxyKey)
      return fail(Errc::kInvalid, at + "service name '" + svc.name + "' is reserved for forgectl's own " +
                                      (svc.name == kRunnerKey ? "runner" : "proxy"));
    if (svc.upstream && !limited)
      return fail(Errc::kInvalid, at + "service '" + svc.name + "' is an upstream (x-forgectl: {upstream: true}), which only "
                                      "network_policy: limited_internet has (this is " + manifest::policy_name(m.network_policy) +
                                      "); make it an ordinary service, or use limited_internet");
    if (svc.upstream) continue;
    names.push_back(svc.name);
    for (const auto& [net, aliases] : svc.networks) names.insert(names.end(), aliases.begin(), aliases.end());
  }
  std::vector<std::string> allowlist;  // every allowlist's names: what the proxy may ever reach
  if (limited) {
    auto sets = allowlist_sets(m);
    if (!sets) return sets.fail();
    plan.allowlists = std::move(*sets);
    for (const auto& set : plan.allowlists) allowlist.insert(allowlist.end(), set.begin(), set.end());
    // An alias on the task network would answer for the real host of that name.
    for (const auto& n : names)
      for (const auto& a : allowlist)
        if (allowlisted(n, {a}))
          return fail(Errc::kInvalid, "service name or alias '" + n + "' would shadow the allowlisted host '" + a + "'");
    // An upstream is reached through the proxy only, so one of its names must be allowlisted, and
    // none may also be a name on the task network (the runner would go there directly).
    for (const auto& svc : env.compose.services) {
      if (!svc.upstream) continue;
      std::vector<std::string> own{svc.name};
      for (const auto& [net, aliases] : svc.networks) own.insert(own.end(), aliases.begin(), aliases.end());
      bool reachable = false;
      for (const auto& n : own) {
        reachable = reachable || allowlisted(n, allowlist);
        for (const auto& t : names)
          if (to_lower(t) == to_lower(n))
            return fail(Errc::kInvalid, "upstream '" + svc.name + "': the name '" + n + "' is also a name on the task network");
      }
      if (!reachable)
        return fail(Errc::kInvalid, env.compose.path + ":" + std::to_string(svc.where.line) + ": upstream '" + svc.name +
                                        "': none of its names (" + join(own, ", ") +
                                        ") is on limited_internet_allowlist, so the proxy would never let anyone reach it");
    }
  }
  if (closed) plan.resolver = resolver_plan(plan, task_net, m.allow_private, limited);
  // A runner that moves: the resolver follows it (the trial switches it with the runner), starting
  // as setup has it — every name, through the outward network, in a full_internet phase; none in a
  // no_internet one; the allowlist's in a limited_internet one.
  if (closed && changes) {
    plan.resolver_switches = true;
    if (setup == NetworkPolicy::kFullInternet) {
      plan.resolver->networks.push_back({"net", {}, ""});
      plan.resolver->cmd->insert(plan.resolver->cmd->end(), {"--mode", "open"});
    } else if (setup == NetworkPolicy::kNoInternet) {
      plan.resolver->cmd->insert(plan.resolver->cmd->end(), {"--mode", "none"});
    }
  }
  if (closed) plan.resolver_address = plan.resolver->networks.front().ipv4;
  const std::vector<std::string> dns = closed ? std::vector<std::string>{plan.resolver_address} : std::vector<std::string>{};
  std::vector<std::string> no_proxy = names;
  no_proxy.push_back(kRunnerKey);
  std::vector<std::string> penv = agent_proxied ? proxy_env(no_proxy) : std::vector<std::string>{};
  // The setup script's own: the proxy's in a limited_internet setup before an agent without it,
  // none in another setup before an agent with it.
  if (setup == NetworkPolicy::kLimitedInternet && !agent_proxied) plan.setup_env = proxy_env(no_proxy);
  if (setup != NetworkPolicy::kLimitedInternet && agent_proxied) plan.setup_env = proxy_env_cleared();

  for (const auto& svc : env.compose.services) {
    ContainerPlan c;
    c.key = svc.name;
    c.role = Role::kService;
    c.name = plan.name + "-" + svc.name;
    c.image = svc.image;
    c.build = svc.build;
    c.cmd = svc.command;
    c.entrypoint = svc.entrypoint;
    c.env = svc.environment;
    if (!svc.upstream) c.env.insert(c.env.end(), penv.begin(), penv.end());  // an upstream is no proxy client
    const manifest::ServiceIsolation* iso = nullptr;
    if (auto it = m.services.find(svc.name); it != m.services.end()) {
      iso = &it->second;
      auto pass = passthrough(iso->env_passthrough, opts, "service '" + svc.name + "'");
      if (!pass) return pass.fail();
      c.env.insert(c.env.end(), pass->begin(), pass->end());
    }
    c.workdir = svc.working_dir;
    c.labels = svc.labels;
    c.healthcheck = svc.healthcheck;
    c.hardening = service_hardening(svc, iso);
    std::vector<std::string> aliases{svc.name};
    for (const auto& [net, as] : svc.networks)
      for (const auto& a : as)
        if (std::find(aliases.begin(), aliases.end(), a) == aliases.end()) aliases.push_back(a);
    c.networks = {{svc.upstream ? std::string("upstream") : task_net, aliases}};
    if (closed) c.dns_options = kFastDnsOptions;
    if (!svc.upstream) c.dns = dns;
    c.depends_on = svc.depends_on;
    plan.services.push_back(std::move(c));
  }

  ContainerPlan& r = plan.runner;
  r.key = kRunnerKey;
  r.role = Role::kRunner;
  r.name = plan.name + "-" + kRunnerKey;
  r.image = !opts.runner_image.empty() ? opts.runner_image : !m.runner.image.empty() ? m.runner.image : kDefaultRunnerImage;
  // A built runner's image is the build's tag, set by up; until then it is no image of forgectl's.
  if (opts.runner_image.empty() && m.runner.image.empty() && m.runner.build) {
    r.build = m.runner.build;
    r.image.clear();
  }
  r.cmd = std::vector<std::string>{"sleep", "2147483647"};
  r.workdir = m.runner.workdir.empty() ? kDefaultWorkdir : m.runner.workdir;
  r.env = m.runner.env;
  r.env.insert(r.env.end(), penv.begin(), penv.end());
  // Docker takes HOME from the image's /etc/passwd; say it, so the agent's home is its tmpfs
  // even in an image without the `agent` entry.
  if (is_own_runner_image(r.image) && (m.runner.user.empty() || m.runner.user == kAgentUser))
    r.env.push_back(std::string("HOME=") + kAgentHome);
  auto pass = passthrough(m.runner.env_passthrough, opts, "runner");
  if (!pass) return pass.fail();
  r.env.insert(r.env.end(), pass->begin(), pass->end());
  const bool own = is_own_runner_image(r.image);
  r.hardening = runner_hardening(m.runner, own);
  if (networked) r.networks = {{task_net, {kRunnerKey}}};
  // setup's networks at create; the trial moves the runner at phase boundaries.
  plan.runner_moves = changes;
  if (changes && manifest::phase_policy(m, manifest::Phase::kSetup) == NetworkPolicy::kFullInternet)
    r.networks.push_back({"net", {}});
  // The workspace is a volume (the archive API sees it whatever the root filesystem is) backed by
  // a size-capped tmpfs: the one disk limit overlay2 on ext4 can enforce. Its root belongs to the
  // agent in forgectl's image; for another image up sets it from the image's own workdir.
  const std::int64_t work_mb = m.runner.disk_mb > 0 ? m.runner.disk_mb : kDefaultWorkspaceMb;
  unsigned uid = 0, gid = 0;
  if (own && r.hardening.user == kAgentUser)
    uid = kAgentUid, gid = kAgentGid;
  else if (own)
    (void)parse_user_ids(r.hardening.user, uid, gid);
  r.hardening.mounts.push_back({r.workdir, "", false, tmpfs_volume_options(work_mb, uid, gid, 0755)});
  if (!opts.helper_volume.empty()) r.hardening.mounts.push_back({kHelperDir, opts.helper_volume, true, ""});
  if (env.tools.mcp_server && env.tools.mcp_server->copies_files()) {
    r.hardening.mounts.push_back({kTaskFilesMount, "", false, tmpfs_volume_options(kTaskFilesMb, 0, 0, 0755)});
    r.hardening.memory += kTaskFilesMb << 20;
    r.hardening.memory_swap = r.hardening.memory;
  }
  if (closed) r.dns_options = kFastDnsOptions;
  r.dns = dns;

  if (limited) plan_proxy(plan, m, opts.proxy_image, agent_proxied);
  if (plan.resolver && plan.proxy && !changes) share_proxy_netns(plan);
  return plan;
}

}  // namespace forge::policy
