// `forgectl run [TASKS...] --out DIR [--config RUN.yaml] [--agent A]... [--trials N] [--concurrency K]
// [--resume] [--shard i/N|auto] [--build-images] [--docker-host H]... [--executor container|local] [--keep-local]
// [--max-* N]`: the sweep (docs/sweeps.md).
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <memory>
#include <ostream>
#include <sstream>

#include "agent/budget.h"
#include "agent/llm_context.h"
#include "agent/pricing.h"
#include "agent/rate_bucket.h"
#include "agent/secrets.h"
#include "cli/app.h"
#include "cli/run_models.h"
#include "cli/run_resume_flags.h"
#include "cli/verbs.h"
#include "core/files.h"
#include "core/limits.h"
#include "core/strings.h"
#include "engine/images.h"
#include "engine/system.h"
#include "manifest/harbor/harbor_load.h"
#include "manifest/run_config_parse.h"
#include "policy/hardening.h"
#include "policy/topology.h"
#include "results/run_json.h"
#include "sweep/egress_probe.h"
#include "core/parallel.h"
#include "results/validity.h"
#include "stack/browser_image.h"
#include "stack/local_images.h"
#include "stack/python_image.h"
#include "stack/runtime.h"
#include "sweep/docker_runner.h"
#include "sweep/local_runner.h"
#include "sweep/node_images.h"
#include "sweep/run.h"
#include "sweep/run_state.h"
#include "sweep/trial_key.h"
#include "tools/local_guard.h"
#include "tools/redact.h"
#include "core/pace.h"
#include "trial/enforced_networks.h"

namespace forge::cli {

namespace {

namespace fs = std::filesystem;

// A run's size is bounded before anything is allocated for it (core/limits.h).
using limits::kMaxConcurrency;
using limits::kMaxTrialsPerTask;

// The admission limits: at most so many of each kind of shared work at once.
struct Limits {
  int builds = 1;  // image builds (local images, compose `build:`)
  int ups = trial::Admission::kAdaptive;    // stacks being created, over all engines (-1: auto)
  int downs = trial::Admission::kAdaptive;  // stacks being torn down (-1: auto)
  int execs = 0;   // tool calls running (0: only the concurrency limits them)
  int grades = 2;  // grading phases (grader containers)
  int warm_pool = -1;  // sandboxes prepared ahead (-1: auto, the concurrency within memory and subnets; 0: none)
  std::map<std::string, int> as_map() const {
    return {{"builds", builds}, {"ups", ups}, {"downs", downs}, {"execs", execs}, {"grades", grades},
            {"warm_pool", warm_pool}};
  }
};

struct RunArgs {
  std::vector<std::string> tasks, agents, hosts;
  std::vector<std::string> env_passthrough;  // names only; recorded in run.json for --resume
  std::string config, out, shard, progress = "auto";
  std::string executor = "container";
  std::string harbor_verifier = "separate";
  std::string runtime;  // --runtime: over orchestrator.runtime and the tasks' own
  int trials = 0, concurrency = 0;
  bool resume = false, keep_local = false, allow_local = false;
  bool no_golden_cache = false;  // --no-golden-cache: every trial replays its own golden state
  bool no_fork = false;          // --no-fork: every trial runs its task's setup_script itself
  bool keep_snapshots = false;   // --keep-snapshots: set-up snapshots outlive the run, reused by content key
  bool build_images = false;  // --build-images: what the tasks need and this node lacks is built first
  std::string max_infra_rate;  // --max-infra-rate as given: a percentage ("5", "2.5%")
  std::string max_up_rate;     // --max-up-rate as given: stacks started per second ("2", "0.5"); "": no pace
  double up_rate = 0;          // --max-up-rate read
  bool canary = false;        // --canary: the cheat canaries' trials besides the agents' (docs/sweeps.md)
  Limits limits;
  std::string run_id;  // kept from run.json on --resume
};

std::string format_percent(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

// On --resume, the invocation recorded in DIR/run.json fills what the command line leaves out, so
// `forgectl run --resume --out DIR` alone continues the run exactly: same run id, tasks, agents,
// trials, concurrency, limits, engines and config.
Status fill_from_run_json(RunArgs& a, const Command& cmd) {
  std::string path = a.out + "/run.json";
  auto run = results::RunJson::read(path);
  if (!run) {
    // A run that has just started may not have written run.json yet: say that it is running.
    if (fs::is_directory(a.out))
      if (auto held = sweep::acquire_run_lock(a.out); !held && held.error().code == Errc::kConflict) return held.fail();
    return fail(run.error().with_context("--resume needs the run's run.json"));
  }
  const auto& inv = run->invocation;
  if (inv.task_paths.empty() && a.tasks.empty())
    return fail(Errc::kInvalid, path + " has no invocation to resume; give TASKS and the original flags");
  a.run_id = run->run_id;
  if (a.tasks.empty()) a.tasks = inv.task_paths;
  if (a.agents.empty()) a.agents = inv.agents;
  if (a.hosts.empty()) a.hosts = inv.docker_hosts;
  if (a.config.empty()) a.config = inv.config;
  if (a.shard.empty()) a.shard = inv.shard;
  if (a.trials == 0) a.trials = inv.trials;
  if (a.concurrency == 0) a.concurrency = inv.concurrency != 0 ? inv.concurrency : run->concurrency;
  if (cmd.given("--executor") == 0 && !inv.executor.empty()) a.executor = inv.executor;
  if (cmd.given("--keep-local") == 0) a.keep_local = inv.keep_local;
  if (cmd.given("--allow-local") == 0) a.allow_local = inv.allow_local;
  if (cmd.given("--no-golden-cache") == 0) a.no_golden_cache = inv.no_golden_cache;
  if (cmd.given("--env-passthrough") == 0) a.env_passthrough = inv.env_passthrough;
  if (cmd.given("--harbor-verifier") == 0 && !inv.harbor_verifier.empty()) a.harbor_verifier = inv.harbor_verifier;
  if (cmd.given("--runtime") == 0) a.runtime = inv.runtime;
  if (cmd.given("--max-infra-rate") == 0 && inv.max_infra_rate) a.max_infra_rate = format_percent(*inv.max_infra_rate);
  if (cmd.given("--canary") == 0) a.canary = inv.canary;
  ForkPaceFlags fork{a.no_fork, a.keep_snapshots, a.max_up_rate};
  resume_fork_pace(inv, [&cmd](const char* flag) { return cmd.given(flag) > 0; }, fork);
  a.no_fork = fork.no_fork;
  a.keep_snapshots = fork.keep_snapshots;
  a.max_up_rate = fork.max_up_rate;
  auto keep = [&](const char* flag, const char* key, int& field) {
    if (cmd.given(flag) == 0 && inv.limits.count(key)) field = inv.limits.at(key);
  };
  keep("--max-builds", "builds", a.limits.builds);
  keep("--max-ups", "ups", a.limits.ups);
  keep("--max-downs", "downs", a.limits.downs);
  keep("--max-execs", "execs", a.limits.execs);
  keep("--max-grades", "grades", a.limits.grades);
  keep("--warm-pool", "warm_pool", a.limits.warm_pool);
  return {};
}

void add_flags(Command cmd, RunArgs& a) {
  cmd.option("tasks", a.tasks,
             "task directories, task.yaml files, or directories of tasks (default: evaluation.task_packs)");
  cmd.option("--config", a.config, "run config (Tolokaforge's format): models, limits, budget");
  // One value per occurrence: `--agent oracle tasks/` must leave tasks/ to the positionals.
  cmd.option("--agent", a.agents,
             "oracle | noop | replay:TRAJECTORY | llm | llm:MODEL (repeat for a matrix); default: llm when "
             "models.agent is set")
      .one_value_each();
  cmd.option("--trials", a.trials, "trials per task and agent (default: orchestrator.repeats, else 1)");
  cmd.option("--concurrency", a.concurrency, "trials at once (default: orchestrator.workers, else 1)");
  cmd.option("--out", a.out, "run directory (default: evaluation.output_dir)");
  cmd.flag("--resume", a.resume, "continue the run in --out: finished trials are skipped, interrupted ones redone");
  cmd.flag("--canary", a.canary,
           "also run the cheat canaries, one trial per task each: scripted agents that plant a reward file or a "
           "conftest.py, read /tests or fetch the solution; their cheat success rate per task is reported apart "
           "from the agents' results (docs/sweeps.md)");
  cmd.option("--shard", a.shard,
             "run only shard i of N (0-based, i/N) of the trial matrix; join with forgectl merge. auto: this "
             "Slurm array task's shard, in DIR/shards/<i>-of-<N> (docs/scale.md)");
  cmd.flag("--build-images", a.build_images,
           "build the images the tasks need that an engine lacks, before the first trial: forgectl's python "
           "image and the tasks' compose builds too (what a Slurm shard does on its node; docs/scale.md)");
  cmd.option("--docker-host", a.hosts,
             "a Docker engine to run trials on (repeat for several: unix:///path, tcp://host:port)")
      .one_value_each();
  cmd.option("--executor", a.executor,
             "container (default): tools run in each trial's runner; local: every task's tools run on this host, "
             "in a sandbox directory under DIR/local (trusted tasks only; docs/tools.md)")
      .one_of({"container", "local"});
  cmd.flag("--allow-local", a.allow_local,
           "honour tasks that ask for tools.executor: local (their shell runs on this host with your rights)");
  cmd.option("--env-passthrough", a.env_passthrough,
             "a host variable a Harbor task's \"${NAME}\" env template may read (repeat for several); "
             "no other host variable reaches a sandbox")
      .one_value_each();
  cmd.option("--harbor-verifier", a.harbor_verifier,
             "separate (default): a Harbor task's tests run in a fresh container; shared: in the agent's own "
             "container after its processes are killed (Harbor's default; what the agent left can act)")
      .one_of({"separate", "shared"});
  cmd.option("--runtime", a.runtime,
             "the OCI runtime every trial's runner runs under: auto (the tasks' own runtime:, else the daemon's "
             "default), runc, crun, runsc (gVisor) or another name the daemon lists (docs/environment.md)");
  cmd.flag("--no-golden-cache", a.no_golden_cache,
           "replay each trial's golden solution on its own instead of once per task for the run (DIR/golden; "
           "docs/grading.md)");
  cmd.flag("--no-fork", a.no_fork,
           "run each trial's setup_script in the trial instead of once per task with every trial forked from a "
           "snapshot of it (docs/sweeps.md \"Forks\")");
  cmd.flag("--keep-snapshots", a.keep_snapshots,
           "keep each task's set-up snapshot after the run, labelled with a content key (task files, setup "
           "script, runner image, engine), and fork from a kept one of the same key instead of running setup; "
           "remove them with forgectl down --snapshots (docs/sweeps.md \"Forks\")");
  cmd.flag("--keep-local", a.keep_local, "keep each local trial's sandbox directory (DIR/local/...) after grading");
  cmd.option("--max-builds", a.limits.builds, "image builds at once").default_val(a.limits.builds);
  // "auto": an adaptive limit that follows the daemon's create/remove latencies (docs/sweeps.md).
  cmd.option("--max-ups", a.limits.ups,
             "stacks being created at once: auto (adaptive, the default), N, or 0 (no limit)")
      .auto_is(trial::Admission::kAdaptive);
  cmd.option("--max-downs", a.limits.downs,
             "stacks being removed at once: auto (adaptive, the default), N, or 0 (no limit)")
      .auto_is(trial::Admission::kAdaptive);
  cmd.option(
         "--warm-pool", a.limits.warm_pool,
         "sandboxes prepared ahead of their trials: auto (the concurrency, within memory and subnets), N, or 0 (none)")
      .auto_is(trial::Admission::kAdaptive);
  cmd.option("--max-execs", a.limits.execs, "tool calls running at once (0: no limit)").default_val(a.limits.execs);
  cmd.option("--max-grades", a.limits.grades, "grading phases at once (0: no limit)").default_val(a.limits.grades);
  cmd.option("--progress", a.progress, "auto | live | plain: a live status line, or one line per event")
      .one_of({"auto", "live", "plain"});
  cmd.option("--max-up-rate", a.max_up_rate,
             "stacks started per second at most, over all engines (e.g. 2 or 0.5; a trial over it waits its turn; "
             "default: no pace; docs/sweeps.md)");
  cmd.option("--max-infra-rate", a.max_infra_rate,
             "mark the run INVALID when infra errors exceed this percentage of its trials (default: "
             "orchestrator.max_infra_rate, else 5; e.g. 5, 2.5 or 5%)");
}

// Everything one `forgectl run` needs, built from the arguments before anything starts.
struct Setup {
  manifest::RunConfig cfg;
  sweep::PlanInput plan_in;
  int concurrency = 1;
  std::string out_dir;
  bool tty = false;
};

// `--shard auto`: this Slurm array task's shard (docs/scale.md), written to its own directory
// under --out, so every task of the array is given the same --out.
Status resolve_auto_shard(RunArgs& a, const HostSettings& host) {
  if (a.out.empty())
    return fail(Errc::kInvalid, "--shard auto needs --out DIR: every shard of the array writes under it");
  auto sh = sweep::shard_from_slurm(host.slurm);
  if (!sh) return sh.fail();
  a.out = sweep::shard_dir(a.out, *sh);
  a.shard = sweep::to_string(*sh);
  return {};
}

Result<Setup> make_setup(RunArgs& a, const Command& cmd, const HostSettings& host) {
  bool auto_shard = a.shard == "auto";
  if (auto_shard)
    if (auto st = resolve_auto_shard(a, host); !st) return st.fail();
  // A shard's batch script always says --resume, so that a requeued shard continues; its first
  // start has no run.json yet and begins the run from the command line.
  bool nothing_to_resume = auto_shard && !fs::exists(a.out + "/run.json");
  if (a.resume && !a.out.empty() && !nothing_to_resume)
    if (auto st = fill_from_run_json(a, cmd); !st) return st.fail();
  Setup s;
  if (!a.config.empty()) {
    a.config = fs::absolute(a.config).lexically_normal().string();
    auto c = manifest::load_run_config(a.config);
    if (!c) return c.fail();
    s.cfg = std::move(*c);
  }
  if (!a.max_infra_rate.empty() || cmd.given("--max-infra-rate")) {
    auto v = parse_percent(a.max_infra_rate);
    if (!v)
      return fail(Errc::kInvalid,
                  "--max-infra-rate '" + a.max_infra_rate + "': give a percentage between 0 and 100 (5, 2.5 or 5%)");
    s.cfg.max_infra_rate = *v;  // over the run config's orchestrator.max_infra_rate
  }
  if (!a.max_up_rate.empty()) {
    char* end = nullptr;
    a.up_rate = std::strtod(a.max_up_rate.c_str(), &end);
    if (end == a.max_up_rate.c_str() || *end != '\0' || !(a.up_rate > 0) || a.up_rate > kMaxPacePerSecond)
      return fail(Errc::kInvalid, "--max-up-rate '" + a.max_up_rate + "': give stacks per second, above 0 and at most 1000 "
                                  "(2, 0.5)");
  }
  if (a.keep_snapshots && a.no_fork)
    return fail(Errc::kInvalid, "--keep-snapshots with --no-fork: a run that forks nothing has no snapshot to keep");
  if (a.trials < 0 || a.concurrency < 0) return fail(Errc::kInvalid, "--trials and --concurrency must be positive");
  for (auto [flag, v] : {std::pair{"--max-ups", a.limits.ups}, {"--max-downs", a.limits.downs}, {"--warm-pool", a.limits.warm_pool}})
    if (v < -1) return fail(Errc::kInvalid, std::string(flag) + " " + std::to_string(v) + ": give auto, 0 or a positive number");
  if (a.limits.warm_pool > kMaxConcurrency)
    return fail(Errc::kInvalid, "--warm-pool " + std::to_string(a.limits.warm_pool) + ": at most " +
                                    std::to_string(kMaxConcurrency) + " sandboxes ahead");
  if (cmd.given("--trials") && a.trials == 0) return fail(Errc::kInvalid, "--trials 0: a run needs at least one trial");
  if (cmd.given("--concurrency") && a.concurrency == 0)
    return fail(Errc::kInvalid, "--concurrency 0: a run needs at least one trial at once");
  if (a.trials > kMaxTrialsPerTask)
    return fail(Errc::kInvalid, "--trials " + std::to_string(a.trials) + ": at most " + std::to_string(kMaxTrialsPerTask) +
                                    " trials per task and agent");
  if (a.concurrency > kMaxConcurrency)
    return fail(Errc::kInvalid, "--concurrency " + std::to_string(a.concurrency) + ": at most " +
                                    std::to_string(kMaxConcurrency) + " trials at once");
  s.plan_in.task_paths = !a.tasks.empty() ? a.tasks : s.cfg.task_packs;
  if (s.plan_in.task_paths.empty()) return fail(Errc::kInvalid, "no tasks: give TASKS... (or evaluation.task_packs in --config)");
  for (auto& p : s.plan_in.task_paths) p = fs::absolute(p).lexically_normal().string();
  a.tasks = s.plan_in.task_paths;
  s.plan_in.trials = a.trials > 0 ? a.trials : s.cfg.repeats;
  a.trials = s.plan_in.trials;
  s.concurrency = a.concurrency > 0 ? a.concurrency : s.cfg.workers;
  a.concurrency = s.concurrency;
  s.out_dir = !a.out.empty() ? a.out : s.cfg.output_dir;
  if (s.out_dir.empty()) return fail(Errc::kInvalid, "no run directory: give --out DIR (or evaluation.output_dir)");
  if (!a.shard.empty()) {
    auto sh = sweep::parse_shard(a.shard);
    if (!sh) return sh.fail();
    s.plan_in.shard = *sh;
  }
  if (a.agents.empty() && !(a.canary && !s.cfg.models.count("agent"))) {  // --canary alone: canaries only
    if (!s.cfg.models.count("agent"))
      return fail(Errc::kInvalid, "no agent: give --agent oracle|replay:FILE|noop|llm:MODEL, or models.agent in the run config");
    a.agents = {"llm"};
  }
  for (const auto& spec : a.agents) {
    auto c = parse_agent(spec, s.cfg);
    if (!c) return c.fail();
    s.plan_in.agents.push_back(*c);
  }
  for (const auto& n : a.env_passthrough) {
    const bool name_ok = !n.empty() && n.size() <= 128 && !std::isdigit(static_cast<unsigned char>(n[0])) &&
                         std::all_of(n.begin(), n.end(),
                                     [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
    if (!name_ok) return fail(Errc::kInvalid, "--env-passthrough '" + n + "' is not a variable name");
  }
  s.cfg.env_passthrough = a.env_passthrough;
  s.cfg.harbor_shared_verifier = a.harbor_verifier == "shared";
  if (!a.runtime.empty()) {
    if (auto bad = manifest::runtime_name_problem(a.runtime); !bad.empty())
      return fail(Errc::kInvalid, "--runtime: " + bad);
    s.cfg.runtime = manifest::is_auto_runtime(a.runtime) ? std::string() : a.runtime;
  }
  s.plan_in.canary = a.canary;
  s.plan_in.executor = a.executor == "local" ? manifest::ExecutorKind::kLocal : manifest::ExecutorKind::kContainer;
  s.plan_in.allow_local = a.allow_local;
  s.tty = a.progress == "live" || (a.progress == "auto" && ::isatty(STDERR_FILENO));
  return s;
}

results::RunJson describe(const RunArgs& a, const Setup& s, const sweep::Plan& plan, const std::string& run_id,
                          const std::string& engine_version, const std::string& started, const sweep::RunSummary* sum) {
  results::RunJson r;
  r.run_id = run_id;
  r.forgectl_version = forgectl_version();
  r.started_at = started;
  if (sum) r.finished_at = iso_now();
  r.status = !sum ? "running" : !sum->stopped.empty() ? "stopped" : sum->interrupted ? "interrupted" : "completed";
  r.config_hash = plan.facts.config_hash;
  for (const auto& ag : s.plan_in.agents) r.agents.push_back(ag.label());
  r.trials_per_task = s.plan_in.trials;
  r.planned = static_cast<int>(plan.jobs.size());
  r.concurrency = s.concurrency;
  r.shard = sweep::to_string(s.plan_in.shard);
  r.docker_engine = engine_version;
  r.executor = plan.local_tasks == 0 ? "container" : plan.local_tasks == plan.tasks.size() ? "local" : "mixed";
  r.engines = plan.facts.engines;
  r.images = plan.facts.images;
  r.invocation = {a.tasks,       a.agents,          a.hosts,           a.config,          a.shard,
                  a.trials,      a.concurrency,     a.limits.as_map(), a.executor,        a.keep_local,
                  a.allow_local, a.env_passthrough, a.harbor_verifier, a.no_golden_cache, a.runtime};
  r.invocation.canary = a.canary;
  record_fork_pace({a.no_fork, a.keep_snapshots, a.max_up_rate}, r.invocation);
  for (const auto& [k, m] : s.cfg.models) r.models[k] = {m.provider, m.name, m.base_url, m.temperature};
  r.limits = {{"max_turns", static_cast<double>(s.cfg.max_turns)},
              {"episode_timeout_s", static_cast<double>(s.cfg.episode_timeout.count() / 1000)},
              {"turn_timeout_s", static_cast<double>(s.cfg.turn_timeout.count() / 1000)},
              {"max_attempt_retries", static_cast<double>(s.cfg.max_attempt_retries)}};
  if (s.cfg.max_budget_usd) r.limits["max_budget_usd"] = *s.cfg.max_budget_usd;
  if (!a.max_infra_rate.empty()) r.invocation.max_infra_rate = s.cfg.max_infra_rate;
  r.max_infra_rate = s.cfg.max_infra_rate.value_or(results::kDefaultMaxInfraRatePercent);
  for (const auto& t : plan.tasks) r.networks[t.task_id] = trial::enforced_networks(t, s.cfg.harbor_shared_verifier);
  if (sum) {
    r.summary = results::RunSummaryJson{sum->planned,      sum->trials,      sum->graded,        sum->passed,
                                        sum->infra_errors, sum->interrupted, sum->concurrency,   sum->cost_usd,
                                        sum->stopped,      sum->valid,       sum->invalid_reason};
    r.leaks = sum->leaks;
  }
  return r;
}

void print_summary(Context& ctx, const sweep::RunSummary& sum, const std::string& dir, std::size_t engines) {
  ctx.out << '\n' << sum.table;
  // The table's last line says why (results/validity.h); this one must not be quoted alone either.
  if (!sum.valid) ctx.out << "INVALID run: ";
  // A run of canaries alone has no agents' line: its counts are the canaries' line below.
  bool agents_line = sum.graded > 0 || sum.canary_graded == 0;
  if (agents_line) ctx.out << sum.passed << "/" << sum.graded << " graded trials passed";
  if (sum.infra_errors) ctx.out << (agents_line ? ", " : "") << sum.infra_errors << " infra error(s) (not counted)";
  ctx.out << (agents_line || sum.infra_errors ? "; " : "") << sum.ran << " run now, " << sum.skipped << " finished before; cost $" << std::fixed
          << std::setprecision(4) << sum.cost_usd << "; " << std::setprecision(1)
          << static_cast<double>(sum.elapsed.count()) / 1000.0 << " s\n";
  if (sum.canary_graded > 0)
    ctx.out << "cheat canaries: " << sum.canary_cheated << "/" << sum.canary_graded << " graded canary trials passed ("
            << (sum.canary_cheated ? "tasks that can be gamed: see the warnings" : "no task was gamed") << ")\n";
  // Loud, after the table: a task a do-nothing agent passes must not go unnoticed.
  for (const auto& w : sum.canary_warnings) ctx.log.warn(w);
  if (sum.leaks.empty()) {
    ctx.out << "leak audit: nothing of run " << sum.run_id << " is left";
    if (engines)
      ctx.out << " on " << engines << " engine(s)";
    else
      ctx.out << " (it used no Docker engine)";
    ctx.out << '\n';
  } else {
    ctx.out << "leak audit: " << sum.leaks.size() << " object(s) of run " << sum.run_id << " left:\n";
    for (const auto& l : sum.leaks) ctx.out << "  " << l << '\n';
  }
  ctx.out << "results: " << dir << " (report.html, aggregate.json, trials.jsonl; Tolokaforge's files in tolokaforge/)\n";
}

// docs/errors.md: 2 a setup error, 130 interrupted (resumable), 1 infra errors left / a stopped
// run / leaks, 0 every planned trial graded.
int exit_code(Context& ctx, const sweep::RunSummary& sum, const std::string& dir) {
  int left = sum.planned - sum.trials;
  if (sum.setup_error) {
    ctx.log.error("run stopped: " + sum.stopped);
    ctx.out << "fix the task, then continue with: forgectl run --resume --out " << dir << '\n';
    return kExitUsage;
  }
  if (!sum.stopped.empty()) ctx.log.error("run stopped early: " + sum.stopped);
  if (ctx.interrupted.load() > 0 || sum.interrupted > 0) {
    ctx.out << "interrupted: " << left << " trial(s) left; continue with: forgectl run --resume --out " << dir << '\n';
    return kExitInterrupted;
  }
  if (sum.infra_errors)
    ctx.out << sum.infra_errors << " trial(s) ended as infra errors after retries; retry them with: forgectl run --resume --out "
            << dir << '\n';
  return !sum.stopped.empty() || !sum.leaks.empty() || sum.infra_errors ? kExitFailure : kExitOk;
}

// Every container task's runtime (--runtime over its own `runtime:`) on every engine, before any
// trial: a runtime an engine lacks, or one that cannot run the task's sandbox there, is a setup error.
Status check_runtimes(sweep::HostPool& pool, const std::vector<manifest::TaskConfig>& tasks,
                      const std::string& forced) {
  const engine::SystemInfo* first = nullptr;  // the first engine that answered, at first_at
  std::string first_at;
  for (auto& e : pool.engines()) {
    if (!e->info)
      if (auto inf = engine::info(*e->client)) e->info = std::move(*inf);
    if (!e->info) continue;  // an engine that does not answer fails its trials as infra errors
    // `auto` is the daemon's default, and a trial's key names it (run_plan.h): every engine must agree.
    if (!first) first = &*e->info, first_at = e->address;
    if (forced.empty() && first->default_runtime != e->info->default_runtime)
      return fail(Errc::kInvalid, "the engines' default runtimes differ (" + first_at + ": " +
                                      first->default_runtime + ", " + e->address + ": " + e->info->default_runtime +
                                      "): a trial's result depends on its runtime; choose one with --runtime");
    for (const auto& t : tasks) {
      if (t.environment.tools.executor == manifest::ExecutorKind::kLocal) continue;
      const std::string& wanted = !forced.empty() ? forced : t.environment.manifest.runtime;
      auto rt =
          stack::choose_runtime(wanted, *e->info, {.limits = true, .network = !policy::network_free(t.environment)});
      if (!rt) return fail(rt.error().with_context(e->address + ": task '" + t.task_id + "'"));
    }
  }
  return {};
}

// The enforcement probe of every closed policy the run uses, on every engine, in parallel; one
// line each on stderr.
std::vector<results::ProbeRecord> probe_engines(Context& ctx, sweep::HostPool& pool,
                                                const std::vector<manifest::NetworkPolicy>& policies,
                                                const std::string& run_id) {
  std::vector<std::vector<results::ProbeRecord>> per(pool.engines().size());
  parallel_for(per.size(), [&](std::size_t i) {
    auto& e = *pool.engines()[i];
    sweep::ProbeOptions o{ctx.host, e.address, run_id, &ctx.interrupted};
    per[i] = sweep::probe_policies(*e.client, policies, o);
  });
  std::vector<results::ProbeRecord> all;
  for (auto& v : per)
    for (auto& r : v) {
      ctx.log.info("egress probe " + r.policy + " on " + r.engine + ": " + (r.passed ? "passed" : "FAILED") + " (" +
                   std::to_string(r.took_ms) + " ms)");
      all.push_back(std::move(r));
    }
  return all;
}

int run_verb(Context& ctx, RunArgs& a, const Command& cmd) {
  auto setup = make_setup(a, cmd, ctx.host);
  if (!setup) return ctx.report(setup.error());
  Setup& s = *setup;
  auto secrets = agent::Secrets::load(fs::current_path() / ".env", agent::DotenvMissing::kIgnore,
                                      [&ctx](const std::string& n) { return ctx.host.env(n.c_str()); });
  if (!secrets) return ctx.report(secrets.error());
  std::vector<std::string> hosts = a.hosts;
  if (hosts.empty() && !ctx.host_flag.empty()) hosts.push_back(ctx.host_flag);
  auto shared_secrets = std::make_shared<agent::Secrets>(std::move(*secrets));
  auto pricing = agent::Pricing::load(s.cfg.pricing_file);
  if (!pricing) return ctx.report(pricing.error());
  // One bucket per provider endpoint, shared by every trial of this process.
  agent::RateBucketRegistry buckets(s.cfg.max_requests_per_second
                                        ? std::optional(agent::RateBucketRegistry::per_second(*s.cfg.max_requests_per_second))
                                        : std::nullopt);
  agent::LlmContext lctx{*shared_secrets, buckets, *pricing, &ctx.log, {}};
  // The engines are connected when the plan first needs one: a run whose every task is on the
  // local executor without test scripts never contacts a daemon.
  std::unique_ptr<sweep::HostPool> pool;
  std::optional<Error> engine_error;
  auto connect = [&]() -> Status {
    if (pool) return {};
    auto p = sweep::HostPool::connect(hosts, ctx.host);
    if (!p) {
      engine_error = p.error();
      return p.fail();
    }
    pool = std::move(*p);
    return {};
  };
  // Engines get forgectl's own images (built from this binary where missing) and lose dead
  // owners' orphans once, before the first image a plan needs from them is resolved.
  Slots builds(a.limits.builds);
  bool prepared = false, services_ready = false, python_ready = false, browser_ready = false;
  auto prepare = [&]() -> Status {
    if (prepared || !pool) return {};
    prepared = true;
    return sweep::prepare_engines(*pool, ctx.host, builds, ctx.log);
  };
  s.plan_in.run = &s.cfg;
  s.plan_in.llm = &lctx;
  s.plan_in.default_runtime = [&]() -> Result<std::string> {
    if (auto st = connect(); !st) return st.fail();
    auto& e = pool->primary();
    if (!e.info)
      if (auto inf = engine::info(*e.client)) e.info = std::move(*inf);
    return e.info ? e.info->default_runtime : std::string();
  };
  std::string env_run_id = random_hex(6);
  auto plan = sweep::make_plan(s.plan_in, [&](const std::string& ref) -> Result<std::string> {
    if (auto st = connect(); !st) return st.fail();
    if (auto st = prepare(); !st) return st.fail();
    // The services image only for a task that runs a built-in service.
    if (ref == stack::kServicesImage && !services_ready) {
      if (auto st = sweep::ensure_services_image(*pool, ctx.host, builds, ctx.log); !st) return st.fail();
      services_ready = true;
    }
    if (ref == stack::kBrowserImage && !browser_ready) {
      if (auto st = sweep::ensure_browser_image(*pool, ctx.host, builds, ctx.log); !st) return st.fail();
      browser_ready = true;
    }
    if (ref == stack::kPythonImage && a.build_images && !python_ready) {
      if (auto st = sweep::ensure_python_image(*pool, ctx.host, builds, ctx.log); !st) return st.fail();
      python_ready = true;
    }
    auto img = engine::inspect_image(*pool->primary().client, stack::effective_image(ref, ctx.host));
    if (!img) return img.fail();
    return sweep::image_key(*img);
  });
  if (engine_error) return ctx.report(*engine_error);
  // Every preflight problem is a setup error: exit 2, nothing started, nothing recorded.
  if (!plan) {
    ctx.report(plan.error().with_context("preflight (nothing was started)"));
    return kExitUsage;
  }
  // Keys without effect, once per task and before any trial: "forgectl: warning: task.yaml:9:7: …".
  for (const auto& w : (*plan)->warnings) ctx.log.warn(w.where.empty() ? w.message : w.where + ": " + w.message);
  // Once per run, before its first trial (docs/harbor.md "The verifier").
  if (s.cfg.harbor_shared_verifier) {
    std::size_t shared = 0;
    for (const auto& t : (*plan)->tasks)
      shared += t.harbor && manifest::shared_verifier_applies(*t.harbor);
    if (shared > 0)
      ctx.log.warn("--harbor-verifier shared: " + std::to_string(shared) +
                   " Harbor task(s) run their tests in the agent's own container, after its processes are killed; "
                   "files and programs the agent left there (a replaced tool, a planted file) can act on the "
                   "verdict. The default, separate, runs them in a fresh container");
  }
  if ((*plan)->needs_engine) {
    if (auto helper = stack::find_exec_helper(ctx.host.exec_helper); !helper) {
      ctx.report(helper.error().with_context("preflight (nothing was started)"));
      return kExitUsage;
    }
    if (auto st = connect(); !st) return ctx.report(st.error());
    if (auto st = check_runtimes(*pool, (*plan)->tasks, s.cfg.runtime); !st) {
      ctx.report(st.error().with_context("preflight (nothing was started)"));
      return kExitUsage;
    }
    for (auto& e : pool->engines()) (*plan)->facts.engines.push_back(e->address);
    if (a.build_images)
      if (auto st = sweep::build_task_images(*pool, (*plan)->tasks, ctx.host, builds, ctx.log); !st)
        return ctx.report(st.error());
  }
  if (!a.run_id.empty()) env_run_id = a.run_id;
  // The enforcement probe, before any trial and before the run directory (docs/sweeps.md).
  std::vector<results::ProbeRecord> probes;
  if (pool) {
    auto policies = sweep::policies_to_probe((*plan)->tasks, s.cfg.harbor_shared_verifier);
    if (!policies.empty()) {
      if (auto st = prepare(); !st) return ctx.report(st.error());
      // The probe stack's resolver (egress-dns) runs the services image.
      if (!services_ready) {
        if (auto st = sweep::ensure_services_image(*pool, ctx.host, builds, ctx.log); !st) return ctx.report(st.error());
        services_ready = true;
      }
      probes = probe_engines(ctx, *pool, policies, env_run_id);
      if (auto why = sweep::probe_failure(probes); !why.empty()) {
        ctx.report(make_error(Errc::kUnsupported, why + "; the host cannot enforce the policy, so no trial was run")
                       .with_context("preflight (nothing was started)"));
        return kExitUsage;
      }
    }
  }

  auto redact = [shared_secrets](std::string_view text) { return tools::redact_text(shared_secrets->redact(text)); };
  auto dir = results::RunDir::open(s.out_dir, redact);
  if (!dir) return ctx.report(dir.error());
  auto budget = std::make_shared<agent::Budget>(s.cfg.max_budget_usd);
  Models models(s.cfg, lctx, budget);

  if (auto st = prepare(); !st) return ctx.report(st.error());

  ctx.handles_interrupts = true;
  trial::TrialEnv env;
  env.host = ctx.host;
  env.run = &s.cfg;
  env.models = [&models](const std::string& key) { return models.get(key); };
  env.budget = budget;
  env.run_id = env_run_id;
  // The trials log through the sweep's line sink: on a terminal their lines scroll above the live
  // block instead of tearing it, and the tool errors the block shows are not printed twice.
  sweep::LineSink log_sink(ctx.err);
  LogLevel level = ctx.log.level();
  if (s.tty && level == LogLevel::kInfo) level = LogLevel::kWarn;
  Logger trial_log(log_sink.stream(), level);
  env.log = &trial_log;
  env.interrupted = &ctx.interrupted;
  env.local_root = (fs::path(dir->dir()) / "local").string();
  env.keep_local = a.keep_local;
  if (!a.no_golden_cache) {
    // Without the host's key the cache still serves this run; its files are then never read back.
    auto secret = trial::golden_cache_secret(ctx.host.state_dir);
    if (!secret) ctx.log.warn("golden cache: " + secret.error().what() + "; --resume will compute golden states again");
    env.golden_cache = std::make_shared<trial::GoldenCache>((fs::path(dir->dir()) / "golden").string(),
                                                            secret ? *secret : std::string(), &trial_log);
  }
  if (!a.no_fork)
    env.snapshots = std::make_shared<trial::SnapshotCache>(
        env.run_id, trial::SnapshotKeeping{a.keep_snapshots, [](const std::string& dir) { return sweep::task_content_hash(dir); }});
  env.local_warning = std::make_shared<tools::LocalWarning>(&ctx.log, ctx.host.require_container);
  trial::Admission admission(a.limits.builds, a.limits.ups, a.limits.downs, a.limits.execs, a.limits.grades,
                             std::max(8, s.concurrency / 2));
  admission.up_pace.set_rate(a.up_rate);
  std::unique_ptr<sweep::TrialRunner> runner;
  if (pool) {
    int containers = 1;  // the most any task's stack runs: memory admission
    std::int64_t limit_bytes = 0;  // the most any task's containers may use together (their limits)
    for (const auto& t : (*plan)->tasks) {
      containers = std::max(containers, static_cast<int>(t.environment.compose.services.size()) + 1 +
                                            manifest::runner_ever(t.environment.manifest, manifest::NetworkPolicy::kLimitedInternet));
      const auto& runner_spec = t.environment.manifest.runner;
      std::int64_t sum = policy::runner_hardening(runner_spec, policy::is_own_runner_image(runner_spec.image)).memory;
      for (const auto& svc : t.environment.compose.services) sum += policy::service_hardening(svc, nullptr).memory;
      limit_bytes = std::max(limit_bytes, sum);
    }
    runner =
        std::make_unique<sweep::DockerTrialRunner>(env, *pool, admission, *dir, (*plan)->networks_per_trial, containers,
                                                   a.limits.warm_pool, static_cast<std::uint64_t>(limit_bytes) >> 20);
  }
  else {
    runner = std::make_unique<sweep::LocalTrialRunner>(env, admission, *dir);
  }
  // Once per run, before its first trial, whatever its trials then do (docs/tools.md).
  if ((*plan)->local_tasks > 0) env.local_warning->before_first_trial((*plan)->local_tasks);

  std::string engine_version;
  if (pool)
    if (auto v = engine::version(*pool->primary().client)) engine_version = v->version;
  std::string started = iso_now();
  sweep::RunOptions o;
  o.concurrency = s.concurrency;
  o.retries = s.cfg.max_attempt_retries;
  o.resume = a.resume;
  o.tty = s.tty;
  o.lease_s = std::chrono::duration_cast<std::chrono::seconds>(s.cfg.episode_timeout).count() + 3600;
  o.run_id = env.run_id;
  o.budget = budget.get();
  o.interrupted = &ctx.interrupted;
  o.log_sink = &log_sink;
  o.max_infra_rate = s.cfg.max_infra_rate.value_or(results::kDefaultMaxInfraRatePercent);
  auto write_run_json = [&](const sweep::RunSummary* sum) {
    auto r = describe(a, s, **plan, env.run_id, engine_version, started, sum);
    r.egress_probe = probes;
    return dir->write_run_json(r.to_json());
  };
  auto sum = sweep::run_sweep(o, **plan, *runner, *dir, write_run_json, ctx.err);
  if (!sum) return ctx.report(sum.error());
  print_summary(ctx, *sum, dir->dir(), pool ? pool->engines().size() : 0);
  return exit_code(ctx, *sum, dir->dir());
}

}  // namespace

void add_run(Command app, Context& ctx, int* rc) {
  auto args = std::make_shared<RunArgs>();
  auto cmd = app.subcommand("run", "Run trials of tasks × agents, grade them on the host, write a run directory");
  add_flags(cmd, *args);
  cmd.on_run([&ctx, rc, args, cmd] { *rc = run_verb(ctx, *args, cmd); });
}

}  // namespace forge::cli
