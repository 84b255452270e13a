// `forgectl run TASKS... [--config RUN.yaml] [--agent …] [--trials N] --out DIR`: trials of tasks,
// graded on the host, written to a run directory; a summary at the end.
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>

#include "agent/budget.h"
#include "agent/llm_context.h"
#include "agent/llm_factory.h"
#include "agent/secrets.h"
#include "cli/verbs.h"
#include "core/json.h"
#include "core/strings.h"
#include "engine/system.h"
#include "manifest/run_config_parse.h"
#include "sweep/run.h"
#include "tools/redact.h"

namespace forge::cli {

namespace {

struct RunArgs {
  std::vector<std::string> tasks;
  std::string config, agent, out;
  int trials = 0, concurrency = 0;
};

Result<sweep::AgentChoice> parse_agent(const std::string& a, const manifest::RunConfig& cfg) {
  sweep::AgentChoice c;
  if (a.empty()) {
    if (!cfg.models.count("agent"))
      return fail(Errc::kInvalid, "no agent: give --agent oracle|replay:FILE|noop, or models.agent in the run config");
    c.kind = sweep::AgentChoice::Kind::kLlm;
  } else if (a == "oracle") {
    c.kind = sweep::AgentChoice::Kind::kOracle;
  } else if (a == "noop") {
    c.kind = sweep::AgentChoice::Kind::kNoop;
  } else if (starts_with(a, "replay:")) {
    c.kind = sweep::AgentChoice::Kind::kReplay;
    c.replay_path = a.substr(7);
  } else if (a == "llm") {
    c.kind = sweep::AgentChoice::Kind::kLlm;
  } else {
    return fail(Errc::kInvalid, "--agent '" + a + "': expected oracle, noop, replay:FILE or llm");
  }
  return c;
}

// Models by run-config key ("agent", "user", "judge"), or a grading model_ref "provider/name".
class Models {
 public:
  Models(const manifest::RunConfig& cfg, const agent::LlmContext& ctx, std::shared_ptr<agent::Budget> b)
      : cfg_(cfg), ctx_(ctx), budget_(std::move(b)) {}
  Result<std::shared_ptr<agent::LlmClient>> get(const std::string& key) {
    std::lock_guard lock(mu_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    manifest::ModelConfig m;
    if (auto it = cfg_.models.find(key); it != cfg_.models.end()) {
      m = it->second;
    } else if (auto slash = key.find('/'); slash != std::string::npos) {
      m.provider = key.substr(0, slash);
      m.name = key.substr(slash + 1);
    } else {
      return fail(Errc::kInvalid, "no model '" + key + "' in the run config's models");
    }
    auto client = agent::make_llm_client(m, ctx_);
    if (!client) return client.fail_with("model '" + key + "'");
    std::shared_ptr<agent::LlmClient> c = agent::budgeted(std::shared_ptr<agent::LlmClient>(std::move(*client)), budget_);
    cache_[key] = c;
    return c;
  }

 private:
  const manifest::RunConfig& cfg_;
  const agent::LlmContext& ctx_;
  std::shared_ptr<agent::Budget> budget_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<agent::LlmClient>> cache_;
};

std::string run_json(const std::string& run_id, const sweep::RunOptions& o, const manifest::RunConfig& cfg,
                     const std::string& engine_version, const std::string& started, const std::string& finished,
                     const sweep::RunSummary* s) {
  json::Writer w;
  w.begin_object().field("run_id", run_id).field("forgectl_version", "0.1.0").field("started_at", started);
  if (!finished.empty()) w.field("finished_at", finished);
  w.field("status", s ? "completed" : "running").field("agent", o.agent.label()).field("trials_per_task", o.trials)
      .field("concurrency", o.concurrency).field("task_paths", o.task_paths).field("config_path", cfg.path)
      .field("docker_engine", engine_version);
  w.key("models").begin_object();
  for (const auto& [k, m] : cfg.models)
    w.key(k).begin_object().field("provider", m.provider).field("name", m.name).field("base_url", m.base_url)
        .key("temperature").num(m.temperature).end_object();
  w.end_object().key("limits").begin_object().field("max_turns", cfg.max_turns)
      .field("episode_timeout_s", static_cast<std::int64_t>(cfg.episode_timeout.count() / 1000))
      .field("turn_timeout_s", static_cast<std::int64_t>(cfg.turn_timeout.count() / 1000))
      .field("max_attempt_retries", cfg.max_attempt_retries);
  if (cfg.max_budget_usd) w.key("max_budget_usd").num(*cfg.max_budget_usd);
  w.end_object();
  if (s)
    w.key("summary").begin_object().field("trials", s->trials).field("passed", s->passed)
        .field("infra_errors", s->infra_errors).key("cost_usd").num(s->cost_usd).end_object();
  w.end_object();
  return w.take();
}

}  // namespace

void add_run(CLI::App& app, Context& ctx, int* rc) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Run trials of tasks (tasks × trials), grade them on the host, write a run directory");
  cmd->add_option("tasks", args->tasks,
                  "task directories, task.yaml files, or directories of tasks (default: evaluation.task_packs)");
  cmd->add_option("--config", args->config, "run config (Tolokaforge's format): models, limits, budget");
  cmd->add_option("--agent", args->agent, "oracle | noop | replay:TRAJECTORY | llm (default: models.agent of the config)");
  cmd->add_option("--trials", args->trials, "trials per task (default: orchestrator.repeats, else 1)");
  cmd->add_option("--concurrency", args->concurrency, "trials at once (default: orchestrator.workers, else 1)");
  cmd->add_option("--out", args->out, "run directory (created; default: evaluation.output_dir)");
  cmd->callback([&ctx, rc, args] {
    manifest::RunConfig cfg;
    if (!args->config.empty()) {
      auto c = manifest::load_run_config(args->config);
      if (!c) {
        *rc = ctx.report(c.error());
        return;
      }
      cfg = std::move(*c);
    }
    sweep::RunOptions o;
    o.task_paths = !args->tasks.empty() ? args->tasks : cfg.task_packs;
    if (o.task_paths.empty()) {
      *rc = ctx.report(make_error(Errc::kInvalid, "no tasks: give TASKS... (or evaluation.task_packs in --config)"));
      return;
    }
    o.trials = args->trials > 0 ? args->trials : cfg.repeats;
    o.concurrency = args->concurrency > 0 ? args->concurrency : cfg.workers;
    o.out_dir = !args->out.empty() ? args->out : cfg.output_dir;
    if (o.out_dir.empty()) {
      *rc = ctx.report(make_error(Errc::kInvalid, "no run directory: give --out DIR (or evaluation.output_dir)"));
      return;
    }
    auto agent = parse_agent(args->agent, cfg);
    if (!agent) {
      *rc = ctx.report(agent.error());
      return;
    }
    o.agent = *agent;
    auto secrets = agent::Secrets::load(std::filesystem::current_path() / ".env");
    if (!secrets) {
      *rc = ctx.report(secrets.error());
      return;
    }
    auto c = ctx.client();
    if (!c) {
      *rc = ctx.report(c.error());
      return;
    }
    auto shared_secrets = std::make_shared<agent::Secrets>(std::move(*secrets));
    auto redact = [shared_secrets](std::string_view text) { return tools::redact_text(shared_secrets->redact(text)); };
    auto writer = sweep::RunWriter::open(o.out_dir, redact);
    if (!writer) {
      *rc = ctx.report(writer.error());
      return;
    }
    auto pricing = agent::Pricing::load(cfg.pricing_file);
    if (!pricing) {
      *rc = ctx.report(pricing.error());
      return;
    }
    // One bucket per provider endpoint, shared by every trial of this process.
    agent::RateBucketRegistry buckets(cfg.max_requests_per_second
                                          ? std::optional(agent::RateBucketRegistry::per_second(*cfg.max_requests_per_second))
                                          : std::nullopt);
    agent::LlmContext lctx{*shared_secrets, buckets, *pricing, &ctx.log, {}};
    auto budget = std::make_shared<agent::Budget>(cfg.max_budget_usd);
    Models models(cfg, lctx, budget);

    ctx.handles_interrupts = true;
    sweep::TrialEnv env;
    env.docker = *c;
    env.run = &cfg;
    env.models = [&models](const std::string& key) { return models.get(key); };
    env.budget = budget;
    env.run_id = random_hex(6);
    env.log = &ctx.log;
    env.interrupted = &ctx.interrupted;
    std::string engine_version;
    if (auto v = engine::version(**c)) engine_version = v->version;
    std::string started = sweep::iso_now();
    (void)writer->write_run_json(run_json(env.run_id, o, cfg, engine_version, started, "", nullptr));
    auto sum = sweep::run_sweep(o, env, *writer, ctx.err);
    if (!sum) {
      *rc = ctx.report(sum.error());
      return;
    }
    if (auto st = writer->write_run_json(run_json(env.run_id, o, cfg, engine_version, started, sweep::iso_now(), &*sum)); !st) {
      *rc = ctx.report(st.error());
      return;
    }
    sweep::print_summary(ctx.out, *sum);
    ctx.out << "results: " << writer->dir() << '\n';
    // A run cut short by a key or model problem did not complete: the trials it skipped are not results.
    *rc = ctx.interrupted.load() > 0 ? kExitInterrupted : sum->stopped.empty() ? kExitOk : kExitFailure;
  });
}

}  // namespace forge::cli
