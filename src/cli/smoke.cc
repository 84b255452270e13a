// `forgectl doctor --smoke`: an internal network, a hardened runner, two execs, teardown.
#include "cli/smoke.h"

#include <ostream>

#include "core/scope_guard.h"
#include "core/strings.h"
#include "engine/containers.h"
#include "engine/exec.h"
#include "engine/images.h"
#include "engine/networks.h"
#include "stack/labels.h"
#include "stack/local_images.h"
#include "sweep/egress_probe.h"

namespace forge::cli {

namespace {

// Logs a step's duration when done: "  ok   runner started (312 ms)".
class Step {
 public:
  Step(std::ostream& out, std::string what) : out_(out), what_(std::move(what)), start_(Clock::now()) {}
  Status done(Status st) {
    out_ << (st ? "  ok    " : "  FAIL  ") << what_ << " (" << elapsed_since(start_).count() << " ms)\n";
    return st;
  }

 private:
  std::ostream& out_;
  std::string what_;
  Clock::time_point start_;
};

Status ensure_runner_image(engine::Client& c, const HostSettings& host) {
  if (engine::inspect_image(c, stack::kRunnerImage)) return {};
  auto helper = stack::find_exec_helper(host.exec_helper);
  if (!helper) return helper.fail();
  auto id = stack::build_runner_image(c, {"/bin/busybox", *helper});
  if (!id) return id.fail();
  return {};
}

}  // namespace

Status run_smoke(engine::Client& c, const HostSettings& host, std::ostream& out) {
  std::string name = "forgectl-smoke-" + random_hex(4);
  // Owned by this process like a sweep's stack: a smoke test killed half-way is an orphan.
  auto labels = stack::StackLabels::owned_here(name, name, "no_internet", "doctor", std::chrono::hours(1),
                                               stack::OwnerMode::kAttached);
  out << "smoke test " << name << '\n';

  if (auto st = Step(out, "runner image " + std::string(stack::kRunnerImage)).done(ensure_runner_image(c, host)); !st) return st;

  std::string net_id, box_id;
  ScopeGuard teardown([&] {
    if (!box_id.empty()) (void)engine::remove_container(c, box_id);
    if (!net_id.empty()) (void)engine::remove_network(c, net_id);
  });

  Step net_step(out, "internal network created");
  engine::NetworkSpec net{name + "-internal"};
  net.internal = true;
  net.labels = labels.for_object("network");
  auto created_net = engine::create_network(c, net);
  if (!net_step.done(created_net ? Status{} : Status(created_net.fail()))) return created_net.fail();
  net_id = *created_net;

  Step box_step(out, "hardened runner created and started");
  engine::ContainerSpec spec;
  spec.name = name + "-runner";
  spec.image = stack::kRunnerImage;
  spec.labels = labels.for_object("runner");
  spec.network = net_id;
  spec.host.cap_drop = {"ALL"};
  spec.host.cap_add = {"NET_BIND_SERVICE"};
  spec.host.security_opt = {"no-new-privileges:true"};
  spec.host.pids_limit = 256;
  spec.host.memory = spec.host.memory_swap = 512ll << 20;
  spec.host.init = true;
  auto box = engine::create_container(c, spec);
  if (!box) return box_step.done(box.fail());
  box_id = box->id;
  if (auto st = engine::start_container(c, box_id); !st) return box_step.done(st);
  if (auto st = box_step.done({}); !st) return st;

  Step verify(out, "hardening read back (CapDrop ALL, no-new-privileges, pids, memory, init)");
  auto info = engine::inspect_container(c, box_id);
  if (!info) return verify.done(info.fail());
  const auto& h = info->host;
  if (h.cap_drop != spec.host.cap_drop || h.security_opt != spec.host.security_opt || h.pids_limit != spec.host.pids_limit ||
      h.memory != spec.host.memory || !h.init)
    return verify.done(fail(Errc::kUnsupported, "the runtime did not apply the requested hardening"));
  if (auto st = verify.done({}); !st) return st;

  Step exec_step(out, "exec round trip");
  engine::ExecOptions hello{{"sh", "-c", "grep CapEff /proc/self/status"}};
  hello.helper = engine::kExecHelperPath;
  auto r = engine::exec_run(c, box_id, hello);
  if (!r) return exec_step.done(r.fail());
  if (r->exit_code != 0 || r->out != "CapEff:\t0000000000000400\n")
    return exec_step.done(fail(Errc::kUnsupported, "unexpected capabilities in the runner: " + trim(r->out)));
  if (auto st = exec_step.done({}); !st) return st;

  Step timeout_step(out, "exec timeout kills the command (1 s deadline)");
  engine::ExecOptions slow{{"sleep", "30"}};
  slow.helper = engine::kExecHelperPath;
  slow.timeout = Millis(1000);
  auto t = engine::exec_run(c, box_id, slow);
  if (!t) return timeout_step.done(t.fail());
  if (!t->timed_out) return timeout_step.done(fail(Errc::kUnsupported, "the command was not stopped at its deadline"));
  if (auto st = timeout_step.done({}); !st) return st;

  Step down(out, "runner and network removed");
  teardown.dismiss();
  auto rm = engine::remove_container(c, box_id);
  auto rn = engine::remove_network(c, net_id);
  return down.done(!rm ? rm : rn);
}

Status run_egress_probes(engine::Client& c, const HostSettings& host, std::ostream& out) {
  Step images(out, "runner, squid and services images");  // services: the probe's resolver
  auto built = stack::ensure_local_images(c, host, {}, {.runner = true, .squid = true, .services = true});
  if (auto st = images.done(built ? Status{} : Status(built.fail())); !st) return st;
  sweep::ProbeOptions o{host, c.transport().describe(), "smoke-" + random_hex(4), nullptr};
  auto records = sweep::probe_policies(c, {manifest::NetworkPolicy::kNoInternet, manifest::NetworkPolicy::kLimitedInternet}, o);
  for (const auto& r : records) {
    out << (r.passed ? "  ok    " : "  FAIL  ") << "egress probe " << r.policy << " (" << r.took_ms << " ms)\n";
    if (!r.error.empty()) out << "          " << r.error << '\n';
    for (const auto& ch : r.checks) out << "          " << (ch.passed ? "ok   " : "FAIL ") << ch.name << ": " << ch.observed << '\n';
  }
  if (auto why = sweep::probe_failure(records); !why.empty()) return fail(Errc::kUnsupported, why);
  return {};
}

}  // namespace forge::cli
