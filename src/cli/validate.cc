// `forgectl validate [PATHS...] [--config RUN.yaml] [--agent A]... [--json]`: the very loader and
// preflight checks `forgectl run` applies before its first trial, without Docker. Environment
// manifests (env.yaml) are checked as `forgectl up` would load them.
#include <filesystem>
#include <memory>
#include <ostream>

#include "agent/pricing.h"
#include "agent/rate_bucket.h"
#include "agent/secrets.h"
#include "cli/run_models.h"
#include "cli/verbs.h"
#include "core/json.h"
#include "manifest/environment_parse.h"
#include "manifest/run_config_parse.h"
#include "policy/topology.h"
#include "sweep/task_set.h"

namespace forge::cli {

namespace {

namespace fs = std::filesystem;

struct ValidateArgs {
  std::vector<std::string> paths, agents;
  std::string config;
  bool json = false;
};

// A manifest of its own (not a task): loads and plans as `forgectl up` would.
bool is_environment_manifest(const std::string& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return false;
  return fs::path(p).filename() != "task.yaml";
}

Status check_environment(const std::string& p) {
  auto env = manifest::load_environment(p);
  if (!env) return env.fail();
  // Planning catches what only the combination shows (reserved names, shadowed hosts).
  policy::PlanOptions o{"fg-validate-000000", {}, "proxy", [](const std::string&) { return std::optional<std::string>("x"); }};
  std::vector<policy::Ipv4Net> nets(policy::network_keys(*env).size(), policy::Ipv4Net{0x0ae70000, 28});
  auto plan = policy::plan_stack(*env, o, nets);
  if (!plan) return plan.fail();
  return {};
}

void print_json(std::ostream& out, const sweep::TaskSet& set, const std::vector<std::pair<std::string, std::string>>& envs) {
  json::Writer w;
  auto problems = [&](const std::vector<trial::Problem>& ps) {
    w.key("problems").begin_array();
    for (const auto& p : ps)
      w.begin_object()
          .field("where", p.where)
          .field("message", p.message)
          .field("severity", p.severity == trial::Severity::kWarning ? "warning" : "error")
          .end_object();
    w.end_array();
  };
  bool ok = set.ok();
  for (const auto& [p, e] : envs) ok = ok && e.empty();
  w.begin_object().field("ok", ok);
  problems(set.run_problems);
  w.key("tasks").begin_array();
  for (const auto& [path, ps] : set.per_task) {
    w.begin_object().field("path", path).field("ok", !sweep::has_errors(ps));
    problems(ps);
    w.end_object();
  }
  for (const auto& [path, err] : envs) {
    w.begin_object().field("path", path).field("ok", err.empty());
    problems(err.empty() ? std::vector<trial::Problem>{} : std::vector<trial::Problem>{{"", err}});
    w.end_object();
  }
  w.end_array().end_object();
  out << w.take() << '\n';
}

void print_text(std::ostream& out, const sweep::TaskSet& set, const std::vector<std::pair<std::string, std::string>>& envs) {
  // A run's warning (a dataset's tasks its manifest leaves out) is said, not counted as invalid.
  for (const auto& p : set.run_problems)
    out << (p.severity == trial::Severity::kWarning ? "" : "invalid: ") << p.text() << '\n';
  // A task with warnings only is ok; its warnings follow, one per line.
  for (const auto& [path, ps] : set.per_task) {
    out << (sweep::has_errors(ps) ? "invalid " + path + ":" : "ok " + path) << '\n';
    for (const auto& p : ps) out << p.text() << '\n';
  }
  for (const auto& [path, err] : envs) {
    if (err.empty()) out << "ok " << path << '\n';
    else out << "invalid " << path << ":\n" << err << '\n';
  }
}

int validate(Context& ctx, const ValidateArgs& a) {
  manifest::RunConfig cfg;
  if (!a.config.empty()) {
    auto c = manifest::load_run_config(a.config);
    if (!c) return ctx.report(c.error());
    cfg = std::move(*c);
  }
  trial::PreflightInput in;
  in.run = &cfg;
  for (const auto& spec : a.agents) {
    auto c = parse_agent(spec, cfg);
    if (!c) return ctx.report(c.error());
    in.agents.push_back(*c);
  }
  // Keys are checked only against a run config: without one there are no model entries to resolve.
  auto secrets = agent::Secrets::load(fs::current_path() / ".env", agent::DotenvMissing::kIgnore,
                                      [&ctx](const std::string& n) { return ctx.host.env(n.c_str()); });
  if (!secrets) return ctx.report(secrets.error());
  agent::RateBucketRegistry buckets(std::nullopt);
  auto pricing = agent::Pricing::load(cfg.pricing_file);
  if (!pricing) return ctx.report(pricing.error());
  agent::LlmContext lctx{*secrets, buckets, *pricing, &ctx.log, {}};
  if (!a.config.empty()) in.llm = &lctx;

  std::vector<std::string> task_paths;
  std::vector<std::pair<std::string, std::string>> envs;  // path → error ("" ok)
  for (const auto& p : a.paths) {
    if (is_environment_manifest(p)) {
      auto st = check_environment(p);
      envs.emplace_back(p, st ? "" : st.error().what());
    } else {
      task_paths.push_back(fs::absolute(p).lexically_normal().string());
    }
  }
  sweep::TaskSet set;
  if (!task_paths.empty()) set = sweep::load_task_set(task_paths, cfg.tasks_glob, in);
  if (a.json) print_json(ctx.out, set, envs);
  else print_text(ctx.out, set, envs);
  bool ok = set.ok();
  for (const auto& [p, e] : envs) ok = ok && e.empty();
  return ok ? kExitOk : kExitUsage;
}

}  // namespace

void add_validate(Command app, Context& ctx, int* rc) {
  auto args = std::make_shared<ValidateArgs>();
  auto cmd = app.subcommand(
      "validate", "Check tasks as `forgectl run` would before its first trial (file:line errors), without Docker");
  cmd.option("paths", args->paths, "task directories, task.yaml files, directories of tasks, or environment manifests")
      .required();
  cmd.option("--config", args->config,
             "run config: its model entries, key variables, judge and user routes are checked too");
  cmd.option("--agent", args->agents, "check for this agent too (oracle: a solution; llm:MODEL: the model entry)")
      .one_value_each();
  cmd.flag("--json", args->json, "print the result as one JSON document");
  cmd.on_run([&ctx, rc, args] { *rc = validate(ctx, *args); });
}

}  // namespace forge::cli
