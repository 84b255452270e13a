// `forgectl doctor`: is this host fit to run forgectl, and what should its operator know.
#include <map>
#include <memory>
#include <ostream>

#include "cli/doctor_checks.h"
#include "cli/smoke.h"
#include "cli/verbs.h"
#include "core/files.h"
#include "core/json.h"
#include "core/strings.h"
#include "engine/images.h"
#include "engine/networks.h"
#include "engine/system.h"
#include "stack/local_images.h"
#include "stack/runtime.h"

namespace forge::cli {

namespace {

struct Report {
  std::string host, engine, api, min_api, used_api, os, kernel, storage, cgroup, cgroup_driver;
  std::string pools;
  long pool_capacity = 0;
  std::size_t networks = 0, forgectl_networks = 0;
  std::string runner_image;  // id or ""
  std::vector<std::string> security, warnings;
  // Each runtime the daemon lists, and runc, crun, runsc when it does not: "" when it can run
  // forgectl's sandboxes here, else why not (the snippet included for a missing one).
  std::map<std::string, std::string> runtimes;
  std::string default_runtime;
};

// What each runtime can do here: a sandbox always has limits; the networked and network-free
// verdicts differ only for a runsc registered with --network=none.
std::map<std::string, std::string> runtime_fitness(const engine::SystemInfo& i) {
  std::map<std::string, std::string> out;
  for (const auto& [name, reg] : i.runtimes) {
    const std::string why = stack::runtime_unfit(name, reg, i, {.limits = true, .network = true});
    const bool offline_ok =
        !why.empty() && stack::runtime_unfit(name, reg, i, {.limits = true, .network = false}).empty();
    out[name] = offline_ok ? "network-free stacks only: " + why : why;
  }
  for (const char* known : {"runc", "crun", "runsc"})
    if (!out.count(known)) out[known] = "not registered; " + stack::runtime_snippet(known);
  return out;
}

Result<Report> gather(engine::Client& c, const std::string& host) {
  auto v = engine::version(c);
  if (!v) return v.fail();
  auto i = engine::info(c);
  if (!i) return i.fail();
  auto nets = engine::list_networks(c);
  if (!nets) return nets.fail();
  Report r;
  r.host = host;
  r.engine = v->version;
  r.api = v->api_version;
  r.min_api = v->min_api_version;
  r.used_api = c.api_version();
  r.os = i->operating_system;
  r.kernel = i->kernel_version;
  r.storage = i->storage_driver;
  r.cgroup = i->cgroup_version;
  r.cgroup_driver = i->cgroup_driver;
  r.security = i->security_options;
  r.runtimes = runtime_fitness(*i);
  r.default_runtime = i->default_runtime;
  r.pool_capacity = default_pool_capacity(i->default_address_pools);
  if (i->default_address_pools.empty()) {
    r.pools = "docker's built-in pools (172.17-31.0.0/16, 192.168.0.0/16 in /20s)";
  } else {
    std::vector<std::string> ps;
    for (const auto& p : i->default_address_pools) ps.push_back(p.base + " in /" + std::to_string(p.size) + "s");
    r.pools = join(ps, ", ");
  }
  r.networks = nets->size();
  for (const auto& n : *nets)
    if (n.labels.count("io.forgectl.stack")) ++r.forgectl_networks;
  if (auto img = engine::inspect_image(c, stack::kRunnerImage); img) r.runner_image = img->id;
  if (auto w = cve_2024_29018_warning(v->version)) r.warnings.push_back(*w);
  if (r.storage != "overlay2")
    r.warnings.push_back("storage driver " + r.storage + " is untested; overlay2 is expected");
  if (r.runner_image.empty())
    r.warnings.push_back(std::string("image ") + stack::kRunnerImage + " is missing: run 'forgectl images build'");
  for (const auto& w : i->warnings) r.warnings.push_back("daemon: " + w);
  // The kernel's setting is the daemon's host's: only seen from here when the engine is local.
  if (host.rfind("unix://", 0) == 0)
    if (auto v = read_text("/proc/sys/fs/protected_symlinks"))
      if (auto w = protected_symlinks_warning(*v)) r.warnings.push_back(*w);
  return r;
}

void print_text(std::ostream& out, const Report& r) {
  auto row = [&](const char* k, const std::string& v) {
    out << "  " << k << std::string(16 - std::string(k).size(), ' ') << v << '\n';
  };
  out << "forgectl doctor\n";
  row("docker host", r.host);
  row("engine", r.engine + " (API " + r.api + ", minimum " + r.min_api + "); forgectl speaks " + r.used_api);
  row("os", r.os + ", kernel " + r.kernel);
  row("storage driver", r.storage);
  row("cgroup", "v" + r.cgroup + " (" + r.cgroup_driver + " driver)");
  for (const auto& [name, why] : r.runtimes) {
    std::string line = name + (name == r.default_runtime ? " (default)" : "") + ": ";
    line += why.empty() ? "runs every policy here" : why;
    for (std::size_t at = 0; (at = line.find('\n', at)) != std::string::npos; at += 19)
      line.replace(at, 1, "\n" + std::string(18, ' '));
    row("runtime", line);
  }
  row("security", r.security.empty() ? std::string("none reported") : join(r.security, ", "));
  row("address pools", r.pools + ": room for about " + std::to_string(r.pool_capacity) + " networks");
  row("networks", std::to_string(r.networks) + " (" + std::to_string(r.forgectl_networks) + " from forgectl stacks)");
  row("runner image", r.runner_image.empty() ? std::string("missing") : r.runner_image.substr(0, 19));
  if (r.warnings.empty()) {
    out << "no warnings\n";
  } else {
    out << r.warnings.size() << " warning(s):\n";
    for (const auto& w : r.warnings) out << "  - " << w << '\n';
  }
}

void print_json(std::ostream& out, const Report& r) {
  json::Writer w;
  w.begin_object()
      .field("docker_host", r.host)
      .field("engine_version", r.engine)
      .field("api_version", r.api)
      .field("min_api_version", r.min_api)
      .field("forgectl_api_version", r.used_api)
      .field("os", r.os)
      .field("kernel", r.kernel)
      .field("storage_driver", r.storage)
      .field("cgroup_version", r.cgroup)
      .field("cgroup_driver", r.cgroup_driver)
      .field("security_options", r.security)
      .field("default_runtime", r.default_runtime)
      .field("runtimes", r.runtimes)
      .field("address_pools", r.pools)
      .field("address_pool_capacity", static_cast<std::int64_t>(r.pool_capacity))
      .field("networks", static_cast<std::int64_t>(r.networks))
      .field("forgectl_networks", static_cast<std::int64_t>(r.forgectl_networks))
      .field("runner_image", r.runner_image)
      .field("warnings", r.warnings)
      .end_object();
  out << w.take() << '\n';
}

}  // namespace

void add_doctor(Command app, Context& ctx, int* rc) {
  auto cmd = app.subcommand("doctor", "Check the Docker daemon and this host; print versions, pools and warnings");
  auto as_json = std::make_shared<bool>(false);
  cmd.flag("--json", *as_json, "print one JSON document");
  auto smoke = std::make_shared<bool>(false);
  cmd.flag("--smoke", *smoke, "also bring up a hardened sandbox, exec in it, and remove it");
  cmd.on_run([&ctx, rc, as_json, smoke] {
    auto c = ctx.client();
    if (!c) {
      *rc = ctx.report(c.error());
      return;
    }
    auto r = gather(**c, (*c)->transport().describe());
    if (!r) {
      *rc = ctx.report(r.error().with_context("doctor"));
      return;
    }
    if (*as_json)
      print_json(ctx.out, *r);
    else
      print_text(ctx.out, *r);
    *rc = kExitOk;
    if (*smoke) {
      if (auto st = run_smoke(**c, ctx.host, *as_json ? ctx.err : ctx.out); !st)
        *rc = ctx.report(st.error().with_context("smoke test"));
      else if (auto pr = run_egress_probes(**c, ctx.host, *as_json ? ctx.err : ctx.out); !pr)
        *rc = ctx.report(pr.error().with_context("smoke test"));
    }
  });
}

}  // namespace forge::cli
