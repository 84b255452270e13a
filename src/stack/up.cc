// `up`: materialise a stack.
#include "stack/up.h"

#include <condition_variable>
#include <ctime>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <semaphore>
#include <thread>

#include "core/parallel.h"
#include "core/scope_guard.h"
#include "core/strings.h"
#include "engine/archive.h"
#include "engine/images.h"
#include "engine/system.h"
#include "engine/tar.h"
#include "engine/volumes.h"
#include "manifest/harbor/harbor_task.h"
#include "policy/squid_conf.h"
#include "policy/subnets.h"
#include "stack/container_create.h"
#include "stack/helper_volume.h"
#include "stack/host_firewall.h"
#include "stack/inventory.h"
#include "stack/local_images.h"
#include "stack/proxy_config.h"
#include "stack/readiness.h"
#include "stack/runtime.h"
#include "stack/specs.h"
#include "stack/task_build.h"
#include "stack/teardown.h"
#include "stack/workspace.h"

namespace forge::stack {

namespace fs = std::filesystem;

std::string new_stack_name(std::string_view hint) {
  std::string slug;
  for (char ch : hint) {
    char c = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (ok) slug += c;
    else if (!slug.empty() && slug.back() != '-') slug += '-';
    if (slug.size() >= 20) break;
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  if (slug.empty()) slug = "stack";
  return "fg-" + slug + "-" + random_hex(3);
}

namespace {

// The daemon creates networks one at a time (libnetwork's lock, then iptables), so 40 stacks
// coming up at once queue 80 creates inside dockerd, and the last ones outwait the request
// timeout while the daemon is merely busy. A create that timed out on our side may still land
// after the failed up's teardown has listed the stack, leaking a network. So this process sends
// a few at a time and queues the rest here, where waiting has no deadline.
constexpr std::ptrdiff_t kConcurrentNetworkCreates = 4;
std::counting_semaphore<kConcurrentNetworkCreates> network_creates{kConcurrentNetworkCreates};

Result<std::string> create_network_queued(engine::Client& c, const engine::NetworkSpec& spec) {
  network_creates.acquire();
  ScopeGuard release([] { network_creates.release(); });
  return engine::create_network(c, spec);
}

// One up in progress: the shared state of its steps.
class Builder {
 public:
  Builder(engine::Client& c, const UpOptions& o) : c_(c), o_(o) {}

  void step(const std::string& line) {
    if (o_.progress) o_.progress(line);
  }
  Status check_interrupt() const {
    if (o_.interrupted && o_.interrupted->load() > 0) return fail(Errc::kCancelled, "interrupted");
    return {};
  }

  // A `build:` service gets its content-addressed forgectl-task/… tag as its image.
  Status ensure_image(policy::ContainerPlan& p, manifest::NetworkPolicy policy) {
    if (p.build) {
      TaskBuildLimits limits;
      limits.network = policy == manifest::NetworkPolicy::kFullInternet;
      auto tag = ensure_task_image(c_, p.key, *p.build, limits, o_.build_slots,
                                   [&](std::string_view l) { step(std::string(l)); });
      if (!tag) return tag.fail();
      p.image = *tag;
      return {};
    }
    p.image = effective_image(p.image, o_.host);
    if (engine::inspect_image(c_, p.image)) return {};
    std::string hint = p.image == policy::kDefaultRunnerImage || p.image == kDefaultProxyImage ||
                               p.image == own_services_image(o_.host)
                           ? "run 'forgectl images build'"
                           : "build or load it first: forgectl never pulls implicitly";
    return fail(Errc::kNotFound, std::string(policy::role_name(p.role)) + " '" + p.key + "': image " + p.image +
                                     " is not on the daemon; " + hint);
  }

  Result<std::string> create_verified(policy::ContainerPlan& p, const StackLabels& labels,
                                      const std::map<std::string, std::string>& net_names) {
    return stack::create_verified(c_, p, labels, net_names, [this](std::string_view l) { step(std::string(l)); });
  }

  // create_verified, then the plan's other networks joined, then started.
  Result<std::string> create_and_start(policy::ContainerPlan& p, const StackLabels& labels,
                                       const std::map<std::string, std::string>& net_names) {
    auto id = create_verified(p, labels, net_names);
    if (!id) return id.fail();
    for (std::size_t i = 1; i < p.networks.size(); ++i)
      if (auto st = engine::connect_network(c_, net_names.at(p.networks[i].network_key), *id, p.networks[i].aliases); !st)
        return st.fail_with(std::string(policy::role_name(p.role)) + " '" + p.key + "'");
    if (auto st = engine::start_container(c_, *id); !st)
      return st.fail_with(std::string(policy::role_name(p.role)) + " '" + p.key + "'");
    return id;
  }

  engine::Client& c_;
  const UpOptions& o_;
};

// overlay2 can cap a writable layer only on xfs mounted with pquota (which the daemon does not
// report; a refusal falls back in create_verified); btrfs and zfs always can.
bool storage_opt_supported(const engine::SystemInfo& info) {
  const auto& d = info.storage_driver;
  if (d == "btrfs" || d == "zfs") return true;
  auto fs = info.driver_status.find("Backing Filesystem");
  return d == "overlay2" && fs != info.driver_status.end() && fs->second == "xfs";
}

// The /env/fs/agent-visible link to the workspace that Tolokaforge tasks name, for an image
// with a writable root that lacks it (forgectl's runner image has it built in).
void install_agent_visible_link(engine::Client& c, const std::string& id, const std::string& workdir) {
  engine::TarWriter link;
  Status st = link.add_directory("env", 0755);
  if (st) st = link.add_directory("env/fs", 0755);
  if (st) st = link.add_symlink("env/fs/agent-visible", workdir);
  auto bytes = link.finish();
  // An image with its own /env refuses this; tools still map the prefix.
  if (st && bytes) (void)engine::put_archive(c, id, "/", std::move(*bytes));
}

// The daemon's storage driver and CPU count, read once per engine: they do not change while
// forgectl runs, and /info is among the daemon's slower calls (every trial's up asked for it).
// The engine's /info: the sweep's copy when it has one (one call per engine, not per trial).
Result<engine::SystemInfo> engine_info(engine::Client& c, const UpOptions& o) {
  if (o.engine_info) return *o.engine_info;
  return engine::info(c);
}

std::string proxy_image(const UpOptions& o) {
  if (!o.proxy_image.empty()) return o.proxy_image;
  return !o.host.proxy_image.empty() ? o.host.proxy_image : kDefaultProxyImage;
}

}  // namespace

Result<UpResult> up_stack(engine::Client& c, const manifest::LoadedEnvironment& env, const UpOptions& o) {
  auto start = Clock::now();
  Builder b(c, o);
  UpResult res;
  res.name = new_stack_name(!env.task_id.empty() ? env.task_id : fs::path(env.source).stem().string());
  const std::string& name = res.name;
  std::string what = "bringing up stack '" + name + "'";

  bool local = c.transport().is_local();
  FirewallMode fw = o.host.host_firewall ? FirewallMode::kEnforce : FirewallMode::kOff;
  if (fw == FirewallMode::kEnforce && !local)
    return fail(Errc::kUnsupported, what + ": the daemon at " + c.transport().describe() +
                                        " is not on this host, so forgectl cannot close the host to task networks; "
                                        "set FORGECTL_HOST_FIREWALL=off to accept that");

  res.labels = StackLabels::owned_here(name, o.run_id.empty() ? random_hex(8) : o.run_id,
                                       manifest::policy_name(env.manifest.network_policy), env.source, o.lease, o.mode);
  const StackLabels& labels = res.labels;

  // From here on, whatever exists under this stack's label is removed if we do not finish.
  std::vector<policy::Ipv4Net> reserved;
  auto pool = policy::SubnetPool::from_settings(o.host);
  if (!pool) return pool.fail_with(what);
  ScopeGuard guard([&] {
    b.step("tearing down '" + name + "'");
    (void)remove_stack(c, name);
    (void)pool->release(reserved);
  });

  auto host_info = engine_info(c, o);
  if (!host_info) return host_info.fail_with(what);
  const bool no_network = o.omit_unused_network && policy::network_free(env);
  Result<std::vector<policy::Ipv4Net>> subnets = std::vector<policy::Ipv4Net>{};
  if (!no_network) subnets = pool->reserve(policy::network_prefixes(env), [&] { return daemon_subnets(c); });
  if (!subnets) return subnets.fail_with(what);
  reserved = *subnets;

  auto helper = own_helper(o.host);
  if (!helper) return helper.fail_with(what);
  policy::PlanOptions popts{name, o.runner_image, proxy_image(o),
                            [&](const std::string& k) { return o.host.env(k.c_str()); }, helper->volume,
                            o.omit_unused_network};
  auto plan = policy::plan_stack(env, popts, *subnets);
  if (!plan) return plan.fail_with(what);
  // The runner's runtime, refused before anything exists when this daemon cannot give it.
  auto rt = choose_runtime(!o.runtime.empty() ? o.runtime : env.manifest.runtime, *host_info,
                           {.limits = true, .network = !plan->runner.networks.empty()});
  if (!rt) return rt.fail_with(what);
  if (rt->named) plan->runner.hardening.runtime = rt->name;
  res.runtime = rt->name;
  // Secrets for services (json-db's control token): in their own environment only, never the runner's.
  for (auto& s : plan->services)
    if (auto it = o.service_env.find(s.key); it != o.service_env.end()) s.env.insert(s.env.end(), it->second.begin(), it->second.end());
  const bool storage_ok = storage_opt_supported(*host_info);
  std::vector<policy::ContainerPlan*> all;
  for (auto& s : plan->services) all.push_back(&s);
  if (plan->proxy) all.push_back(&*plan->proxy);
  if (plan->resolver) all.push_back(&*plan->resolver);
  all.push_back(&plan->runner);
  for (auto* p : all) {
    (void)policy::fit_to_host(p->hardening, host_info->ncpu);
    (void)policy::fit_to_storage(p->hardening, storage_ok);
  }

  // Images first: nothing is created for a stack that cannot start.
  for (auto* p : all)
    if (auto st = b.ensure_image(*p, env.manifest.network_policy); !st) return st.fail_with(what);
  // A Harbor task without a workdir works where its image says (WORKDIR /app): the workspace
  // volume, the agent's directory and what reaches the verifier all move there.
  if (env.manifest.runner.workdir_from_image && env.manifest.runner.workdir.empty() &&
      !policy::is_own_runner_image(plan->runner.image)) {
    auto dir = image_working_dir(c, plan->runner.image);
    if (!dir) return dir.fail_with(what);
    // A WORKDIR that another mount of the runner holds (/tmp), or one on the verifier's reserved
    // paths (/logs, /tests: the agent would own them in the verifier's container), keeps the default.
    if (!dir->empty() && *dir != plan->runner.workdir && !policy::find_mount(plan->runner.hardening, *dir) &&
        manifest::reserved_verifier_path(*dir).empty()) {
      if (auto* m = policy::find_mount(plan->runner.hardening, plan->runner.workdir)) m->target = *dir;
      plan->runner.workdir = *dir;
    }
  }
  // The helper volume, made and filled when new; verified through the first runner (below).
  if (auto hv = ensure_helper_volume(c, o.host, plan->runner.image); !hv) return hv.fail_with(what);
  if (auto st = b.check_interrupt(); !st) return st.fail_with(what);
  if (o.on_planned) o.on_planned(labels, *plan);

  // Networks, in parallel, then the host firewall for each bridge.
  std::map<std::string, std::string> net_names;
  for (const auto& n : plan->networks) net_names[n.key] = n.name;
  std::vector<Result<std::string>> net_ids(plan->networks.size(), fail(Errc::kIo, "not created"));
  parallel_for(plan->networks.size(),
               [&](std::size_t i) { net_ids[i] = create_network_queued(c, network_spec(plan->networks[i], labels)); });
  for (std::size_t i = 0; i < net_ids.size(); ++i) {
    if (!net_ids[i]) return net_ids[i].fail_with(what);
    res.networks[plan->networks[i].key] = *net_ids[i];
  }
  (void)pool->release(reserved);  // the daemon's own list covers them now
  reserved.clear();
  if (fw == FirewallMode::kEnforce)
    for (const auto& n : plan->networks)
      if (auto st = close_host(n.bridge, name); !st) return st.fail_with(what);
  if (!plan->networks.empty()) b.step("networks " + join([&] {
    std::vector<std::string> v;
    for (const auto& n : plan->networks) v.push_back(n.name + " (" + n.subnet.str() + (n.internal ? ", internal)" : ")"));
    return v;
  }(), ", "));
  if (auto st = b.check_interrupt(); !st) return st.fail_with(what);

  // The resolver, beside the proxy, the services and the runner: every container of a closed stack
  // asks it for the names Docker's embedded DNS does not know; it runs before up returns.
  // One in the proxy's network namespace is created once the proxy exists and started once it runs.
  // (Declared in this order so the start, which waits for the create, is joined first on a failure.)
  std::future<Result<std::string>> resolver_made;
  std::future<Result<std::string>> resolver_up;
  const bool resolver_shares = plan->resolver && !plan->resolver->netns_of.empty();
  if (plan->resolver && !resolver_shares)
    resolver_up = std::async(std::launch::async, [&] { return b.create_and_start(*plan->resolver, labels, net_names); });
  auto resolver_started = [&]() -> Status {
    if (!resolver_up.valid()) return {};
    auto id = resolver_up.get();
    if (!id) return id.fail();
    res.containers[policy::kResolverKey] = *id;
    b.step("resolver started (" + plan->resolver_address + (resolver_shares ? ", in the proxy's network namespace)" : ")"));
    return {};
  };

  std::mutex res_mu;
  // The runner is created and verified while the proxy and the services start; it starts last, as
  // its running state marks a finished stack (see inventory.h). Another image's workdir is read first: the
  // tmpfs workspace takes its owner and mode now and its content once the runner runs.
  auto& runner_plan = plan->runner;
  WorkdirSeed seed;
  auto runner_ready = std::async(std::launch::async, [&]() -> Result<std::string> {
    if (!policy::is_own_runner_image(runner_plan.image)) {
      auto s = image_workdir(c, runner_plan.image, runner_plan.workdir, labels.for_object("probe"));
      if (!s) return s.fail();
      seed = std::move(*s);
      unsigned uid = seed.uid, gid = seed.gid, mode = seed.mode;
      if (!seed.exists && !policy::parse_user_ids(runner_plan.hardening.user, uid, gid)) uid = gid = 0;
      const std::int64_t mb =
          env.manifest.runner.disk_mb > 0 ? env.manifest.runner.disk_mb : policy::kDefaultWorkspaceMb;
      if (auto* m = policy::find_mount(runner_plan.hardening, runner_plan.workdir))
        m->tmpfs_options = policy::tmpfs_volume_options(mb, uid, gid, mode);
    }
    auto id = b.create_verified(runner_plan, labels, net_names);
    if (!id) return id.fail();
    // A runner whose networks change by phase starts on setup's: the rest joined before it starts.
    for (std::size_t i = 1; i < runner_plan.networks.size(); ++i)
      if (auto st = engine::connect_network(c, net_names.at(runner_plan.networks[i].network_key), *id,
                                            runner_plan.networks[i].aliases);
          !st)
        return st.fail_with("runner");
    {
      std::lock_guard lock(res_mu);
      res.containers[runner_plan.key] = *id;
    }
    if (auto st = verify_helper_once(c, o.host, *id, runner_plan.image); !st) return st.fail();
    if (!runner_plan.hardening.readonly_rootfs) install_agent_visible_link(c, *id, runner_plan.workdir);
    return id;
  });
  // The sidecar: created on the task network, its config put in, the edge attached, started, ready.
  // Beside the services that are no client of it (upstreams); the others start once it is ready.
  auto proxy_up = [&]() -> Status {
    auto& p = *plan->proxy;
    auto id = b.create_verified(p, labels, net_names);
    if (!id) return id.fail();
    {
      std::lock_guard lock(res_mu);
      res.containers[p.key] = *id;
    }
    if (resolver_shares) {
      plan->resolver->netns_container = *id;
      resolver_made = std::async(std::launch::async, [&] { return b.create_verified(*plan->resolver, labels, net_names); });
    }
    if (auto st = put_squid_conf(c, *id, plan->squid_conf); !st) return st.fail();
    for (std::size_t i = 1; i < p.networks.size(); ++i)
      if (auto st = engine::connect_network(c, net_names.at(p.networks[i].network_key), *id, p.networks[i].aliases); !st)
        return st.fail();
    if (auto st = engine::start_container(c, *id); !st) return st.fail();
    if (resolver_shares)  // its namespace exists now; squid starting up needs no daemon call
      resolver_up = std::async(std::launch::async, [&]() -> Result<std::string> {
        auto rid = resolver_made.get();
        if (!rid) return rid.fail();
        if (auto st = engine::start_container(c, *rid); !st) return st.fail_with("resolver");
        return rid;
      });
    if (auto st = wait_proxy_ready(c, *id, Deadline::in(Millis(30000)), o.interrupted); !st) return st.fail();
    b.step("egress proxy ready (" + p.image + ")");
    return {};
  };
  std::shared_future<Status> proxy_ready;
  if (plan->proxy) proxy_ready = std::async(std::launch::async, proxy_up).share();
  auto proxy_client = [&](const policy::ContainerPlan& s) {
    return proxy_ready.valid() && !(s.networks.size() == 1 && s.networks.front().network_key == "upstream");
  };

  // Services: each starts once what it depends on has started (or is healthy, when asked).
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    std::map<std::string, int> state;  // 1 started, 2 healthy, -1 failed
  } gate;
  std::vector<Status> outcomes(plan->services.size());
  auto wait_for = [&](const std::string& dep, manifest::DependCondition cond) -> Status {
    std::unique_lock lock(gate.mu);
    int need = cond == manifest::DependCondition::kHealthy ? 2 : 1;
    gate.cv.wait(lock, [&] { return gate.state[dep] >= need || gate.state[dep] < 0; });
    if (gate.state[dep] < 0) return fail(Errc::kCancelled, "dependency '" + dep + "' failed");
    return {};
  };
  auto mark = [&](const std::string& key, int s) {
    std::lock_guard lock(gate.mu);
    gate.state[key] = s;
    gate.cv.notify_all();
  };
  parallel_for(
      plan->services.size(),
      [&](std::size_t i) {
        auto& s = plan->services[i];
        auto run = [&]() -> Status {
          for (const auto& [dep, cond] : s.depends_on)
            if (auto st = wait_for(dep, cond); !st) return st;
          if (proxy_client(s) && !proxy_ready.get()) return fail(Errc::kCancelled, "the egress proxy failed");
          if (auto st = b.check_interrupt(); !st) return st;
          auto id = b.create_verified(s, labels, net_names);
          if (!id) return id.fail();
          {
            std::lock_guard lock(res_mu);
            res.containers[s.key] = *id;
          }
          if (auto st = engine::start_container(c, *id); !st) return st.fail_with("service '" + s.key + "'");
          mark(s.key, 1);
          if (s.healthcheck && !s.healthcheck->disable) {
            Millis probe_timeout = s.healthcheck->timeout.count() > 0 ? s.healthcheck->timeout : Millis(30000);
            if (auto st = wait_healthy(c, *id, s.key, Deadline::in(o.health_timeout), o.interrupted,
                                       &s.healthcheck->test, probe_timeout);
                !st)
              return st;
            b.step("service " + s.key + " healthy");
          } else {
            b.step("service " + s.key + " started");
          }
          mark(s.key, 2);
          return {};
        };
        outcomes[i] = run();
        if (!outcomes[i]) mark(s.key, -1);
      },
      plan->services.size());
  auto runner_id = runner_ready.get();
  if (proxy_ready.valid())
    if (const auto& st = proxy_ready.get(); !st) return st.fail_with(what + ": the egress proxy");
  for (const auto& st : outcomes)
    if (!st && st.error().code != Errc::kCancelled) return st.fail_with(what);
  for (const auto& st : outcomes)
    if (!st) return st.fail_with(what);
  if (!runner_id) return runner_id.fail_with(what);
  if (auto st = b.check_interrupt(); !st) return st.fail_with(what);
  if (auto st = engine::start_container(c, *runner_id); !st) return st.fail_with(what);
  // Only now: a tmpfs volume keeps nothing put into it before the container runs.
  if (auto st = seed_workspace(c, *runner_id, runner_plan.workdir, seed); !st) return st.fail_with(what);
  b.step("runner started (" + runner_plan.image + ")");
  // Before up returns: no process of the trial's (setup, the agent) runs before then, and the
  // runner's own sleep asks no name, so its start need not wait for the resolver's. Services
  // started beside it: an outside name they ask for in that moment fails either way.
  if (auto st = resolver_started(); !st) return st.fail_with(what);
  if (auto st = b.check_interrupt(); !st) return st.fail_with(what);

  guard.dismiss();
  res.plan = std::move(*plan);
  res.took = elapsed_since(start);
  return res;
}

}  // namespace forge::stack
