// `forgectl up MANIFEST|TASK_DIR`: bring a task's environment up and leave it running.
#include <memory>
#include <ostream>

#include "cli/verbs.h"
#include "core/json.h"
#include "core/service_token.h"
#include "manifest/environment_parse.h"
#include "manifest/scalar_parse.h"
#include "stack/up.h"

namespace forge::cli {

namespace {

struct UpArgs {
  std::string path, runner_image, proxy_image, runtime, lease = "12h", health_timeout = "120s";
  bool json = false;
};

void print_json(std::ostream& out, const stack::UpResult& r) {
  json::Writer w;
  w.begin_object().field("name", r.name).field("policy", manifest::policy_name(r.plan.policy));
  w.key("networks").begin_array();
  for (const auto& n : r.plan.networks)
    w.begin_object()
        .field("key", n.key)
        .field("name", n.name)
        .field("id", r.networks.at(n.key))
        .field("subnet", n.subnet.str())
        .field("internal", n.internal)
        .field("bridge", n.bridge)
        .end_object();
  w.end_array().key("containers").begin_array();
  for (const auto& [key, id] : r.containers) w.begin_object().field("key", key).field("id", id).end_object();
  w.end_array().field("runtime", r.runtime).field("took_ms", static_cast<std::int64_t>(r.took.count())).end_object();
  out << w.take() << '\n';
}

}  // namespace

void add_up(Command app, Context& ctx, int* rc) {
  auto args = std::make_shared<UpArgs>();
  auto cmd =
      app.subcommand("up", "Bring up a task's environment (networks, services, proxy, runner) and leave it running");
  cmd.option("path", args->path, "task directory, task.yaml, or environment manifest").required();
  cmd.flag("--json", args->json, "print the stack as one JSON document");
  cmd.option("--runner-image", args->runner_image,
             "runner image (default: the manifest's, else forgectl/runner:local)");
  cmd.option("--proxy-image", args->proxy_image,
             "egress proxy image for limited_internet (default: $FORGECTL_PROXY_IMAGE, else forgectl/squid:local)");
  cmd.option("--runtime", args->runtime,
             "the runner's OCI runtime: auto (the manifest's runtime:, else the daemon's default), runc, crun, "
             "runsc (gVisor) or another name the daemon lists");
  cmd.option("--lease", args->lease, "how long the stack may live before 'down --orphans' may reap it")
      .default_val("12h");
  cmd.option("--health-timeout", args->health_timeout, "how long to wait for each service to be healthy")
      .default_val("120s");
  cmd.on_run([&ctx, rc, args] {
    auto lease = manifest::parse_duration(args->lease);
    auto health = manifest::parse_duration(args->health_timeout);
    if (!lease || lease->count() <= 0) {
      *rc = ctx.report(make_error(Errc::kInvalid, "--lease '" + args->lease + "' is not a duration like 12h or 90m"));
      return;
    }
    if (!health || health->count() <= 0) {
      *rc = ctx.report(make_error(Errc::kInvalid, "--health-timeout '" + args->health_timeout + "' is not a duration like 120s"));
      return;
    }
    auto env = manifest::load_environment(args->path);
    if (!env) {
      *rc = ctx.report(env.error());
      return;
    }
    auto c = ctx.client();
    if (!c) {
      *rc = ctx.report(c.error());
      return;
    }
    // json-db and rag serve only with a control token; this stack's lives in their environments
    // alone (forgectl up prints nothing of it: a stack left up is for `forgectl exec` and debugging).
    auto token = new_control_token();
    if (!token) {
      *rc = ctx.report(token.error());
      return;
    }
    stack::UpOptions o;
    o.service_env = service_token_env(*token);
    o.host = ctx.host;
    o.runner_image = args->runner_image;
    o.proxy_image = args->proxy_image;
    if (auto bad = manifest::runtime_name_problem(args->runtime); !bad.empty()) {
      *rc = ctx.report(make_error(Errc::kInvalid, "--runtime: " + bad));
      return;
    }
    o.runtime = manifest::is_auto_runtime(args->runtime) ? std::string() : args->runtime;
    o.lease = std::chrono::duration_cast<std::chrono::seconds>(*lease);
    o.health_timeout = *health;
    o.progress = [&ctx](std::string_view line) { ctx.log.info(line); };
    o.interrupted = &ctx.interrupted;
    ctx.handles_interrupts = true;
    auto r = stack::up_stack(**c, *env, o);
    if (!r) {
      *rc = r.error().code == Errc::kCancelled ? (ctx.report(r.error()), kExitInterrupted) : ctx.report(r.error());
      return;
    }
    ctx.log.info("stack " + r->name + " is up (" + std::to_string(r->took.count()) + " ms)");
    if (args->json)
      print_json(ctx.out, *r);
    else
      ctx.out << r->name << '\n';
    *rc = kExitOk;
  });
}

}  // namespace forge::cli
