// Network posture → topology: which networks a stack gets, which container sits where, with which
// aliases, environment and hardening. Pure planning; the stack layer carries it out.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "manifest/environment.h"
#include "policy/hardening.h"
#include "policy/subnets.h"

namespace forge::policy {

inline constexpr const char* kRunnerKey = "runner";
inline constexpr const char* kProxyKey = "egress-proxy";
// The trial's resolver (services/dns_server.h): Docker's upstream for every container on a closed
// trial's task network, at a fixed address (the subnet's last), running this binary's services image.
inline constexpr const char* kResolverKey = "egress-dns";
inline constexpr const char* kResolverImage = "forgectl/services:local";
inline constexpr const char* kDefaultRunnerImage = "forgectl/runner:local";
inline constexpr const char* kDefaultWorkdir = "/work";
// Where forgectl's helper lives in the runner: its named helper volume (forgectl-helper-<digest>),
// mounted read-only over whatever the image has there, so the agent cannot replace the helper
// and no image can bring its own.
inline constexpr const char* kHelperDir = "/.forgectl";
// Where a task's MCP server files are (tasks name this path): a link in forgectl's read-only
// helper volume to kTaskFilesMount, a small tmpfs volume of their own. (Docker's archive API
// refuses a PUT below a read-only mount even into a writable mount nested there.)
inline constexpr const char* kTaskFilesDir = "/.forgectl/task";
inline constexpr const char* kTaskFilesMount = "/.forgectl-task";
// Unknown names fail in about a second instead of ~10 s on networks with no way out.
inline const std::vector<std::string> kFastDnsOptions{"timeout:1", "attempts:1"};

struct NetworkPlan {
  std::string key;   // "internal" | "edge" | "upstream" (limited_internet) | "net" (full_internet)
  std::string name;  // the Docker network's name: "<stack>-<key>"
  bool internal = true;
  Ipv4Net subnet;
  std::string bridge;  // the host bridge's name (≤ 15 chars), so host firewall rules can name it
};

struct Attachment {
  std::string network_key;
  std::vector<std::string> aliases;
  std::string ipv4;  // a fixed address (the resolver's); empty: the daemon's choice
};

struct ContainerPlan {
  std::string key;   // the compose service name, kRunnerKey or kProxyKey
  Role role = Role::kService;
  std::string name;  // the container's name: "<stack>-<key>"
  std::string image;
  std::optional<manifest::ComposeBuild> build;  // build `image` from this first
  std::optional<std::vector<std::string>> cmd, entrypoint;
  std::vector<std::string> env;  // "K=V"
  std::string workdir;
  std::map<std::string, std::string> labels;  // the compose file's labels
  std::optional<manifest::ComposeHealthcheck> healthcheck;
  Hardening hardening;
  std::vector<Attachment> networks;  // the first is joined at create, the rest before start
  // The key of the container whose network namespace this one joins instead of networks of its own
  // (the resolver in the proxy's: one network sandbox less to make); its id is set by up.
  std::string netns_of, netns_container;
  std::vector<std::string> volumes;  // anonymous volumes (Config.Volumes); mounts are in `hardening`
  std::vector<std::string> dns_options;
  // Docker's upstream resolvers (HostConfig.Dns): the trial's resolver on a closed network, so a
  // name Docker's embedded DNS does not know is refused and logged there, never sent out.
  std::vector<std::string> dns;
  std::map<std::string, manifest::DependCondition> depends_on;
};

struct StackPlan {
  std::string name;
  manifest::NetworkPolicy policy = manifest::NetworkPolicy::kNoInternet;
  std::vector<NetworkPlan> networks;
  std::vector<ContainerPlan> services;  // in file order
  std::optional<ContainerPlan> proxy;
  std::optional<ContainerPlan> resolver;  // a closed, networked stack's (kResolverKey)
  // The resolver's address on the task network (every container's HostConfig.Dns): its own, or,
  // when it shares the proxy's network namespace, the proxy's there.
  std::string resolver_address;
  ContainerPlan runner;
  std::string squid_conf;  // with a proxy: the config to put at /etc/squid/squid.conf
  // The runner's networks change between phases (manifest::runner_changes_network): it starts on
  // setup's (runner.networks) and the trial moves it (runner_network_keys) before the agent's
  // first process, and before each step of a Harbor task whose steps differ.
  bool runner_moves = false;
  // The resolver follows the runner: open (every name, on "net" too) in a full_internet phase,
  // the allowlist's names in a limited_internet one, none in a no_internet one; it starts as
  // setup's phase has it.
  bool resolver_switches = false;
  // The proxy is on the task network (as kProxyAlias) only in the runner's limited_internet
  // phases; the trial attaches and detaches it with the runner's moves.
  bool proxy_switches = false;
  // The allowlists the runner's limited_internet phases use, normalised: [0] the manifest's, then
  // a Harbor step's own; the resolver answers one at a time, the proxy has one's config.
  std::vector<std::vector<std::string>> allowlists;
  std::vector<std::string> squid_confs;  // each allowlist's config, when there is more than one
  // A full_internet phase's config, for a runner that keeps the proxy variables (a Harbor public
  // step beside allowlist steps): the proxy is on the task network then too, open.
  std::string squid_open_conf;
  // Added to the setup script's environment (its phase's proxy variables, or theirs emptied)
  // when setup's policy is not the agent's as to the proxy.
  std::vector<std::string> setup_env;
};

// At most this many different allowlists in one trial (the resolver switches by signal).
inline constexpr std::size_t kMaxAllowlists = 8;
// The index in plan.allowlists of `allowlist` (as written; normalised here); -1: not one of them.
int allowlist_index(const StackPlan& plan, const std::vector<std::string>& allowlist);

// The network keys the runner is on under `policy` (no_internet or full_internet in a stack whose
// runner moves; its planned networks otherwise).
std::vector<std::string> runner_network_keys(const StackPlan& plan, manifest::NetworkPolicy policy);

struct PlanOptions {
  std::string stack_name;
  std::string runner_image;  // overrides the manifest's and the default
  std::string proxy_image;
  // Host environment, for env_passthrough (nullopt: not set on the host).
  std::function<std::optional<std::string>(const std::string&)> host_env;
  // forgectl's helper volume (stack::ensure_helper_volume), mounted read-only at kHelperDir in
  // the runner; empty: none (plans made without a daemon).
  std::string helper_volume;
  // A stack that needs no network (network_free) gets none: its containers run with NetworkMode
  // none and its tools go over exec. Sweeps' trials ask for this; `forgectl up` keeps the task
  // network, which a user may attach other containers to.
  bool omit_unused_network = false;
};

// The networks a posture needs, in order: "internal" (no/limited), "edge" (limited), "net" (full).
std::vector<std::string> network_keys(manifest::NetworkPolicy p);
// The networks a stack of this environment needs, in order; their subnets are reserved first.
// A runner whose setup and agent policies differ (no_internet and full_internet) needs both:
// "internal" (the services', the resolver's) and "net".
// The posture's, plus "upstream" (internal: the proxy and the compose file's upstreams, see
// compose.md) under limited_internet when the compose file declares an upstream.
std::vector<std::string> network_keys(const manifest::LoadedEnvironment& env);
// A no_internet stack without services (nor a proxy): its runner talks to nobody, so it needs
// no network at all.
bool network_free(const manifest::LoadedEnvironment& env);
// The prefix each of those networks needs.
std::vector<int> network_prefixes(const manifest::LoadedEnvironment& env);

// "1000:1000" or "1000" → ids (a lone uid's gid is taken equal to it); false for names or "".
bool parse_user_ids(const std::string& user, unsigned& uid, unsigned& gid);

// Whether `image` is forgectl's own runner image (a read-only root, the agent user).
bool is_own_runner_image(std::string_view image);

// Plans the stack; `subnets` follow network_keys(env). Errors name the offending service or key.
Result<StackPlan> plan_stack(const manifest::LoadedEnvironment& env, const PlanOptions& opts,
                             const std::vector<Ipv4Net>& subnets);

}  // namespace forge::policy
