// In-process trials against the suite's daemon: the run config and trial environment every rig
// starts from (no budget cap, a fresh run id, no model), the run's leftovers, and a rig whose
// models are the scripted LLM server's.
#pragma once

#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/budget.h"
#include "core/strings.h"
#include "engine/containers.h"
#include "engine/networks.h"
#include "manifest/run_config.h"
#include "stack/labels.h"
#include "support/docker_env.h"
#include "support/fake_llm_server.h"
#include "trial/trial.h"

namespace forge::test {

// The filter for everything a trial of run `run_id` created.
inline engine::Filters run_filter(const std::string& run_id) {
  return {{"label", {std::string(stack::kLabelRun) + "=" + run_id}}};
}

struct TrialRig {
  manifest::RunConfig cfg;
  std::shared_ptr<agent::Budget> budget;
  trial::TrialEnv env;

  explicit TrialRig(const std::string& run_prefix = "t", std::optional<double> budget_usd = std::nullopt)
      : budget(std::make_shared<agent::Budget>(budget_usd)) {
    cfg.max_budget_usd = budget_usd;
    cfg.turn_timeout = Millis(60000);
    env.docker = docker_env().client;
    env.host = docker_env().host;
    env.run = &cfg;
    env.budget = budget;
    env.run_id = run_prefix + random_hex(5);
    env.models = [](const std::string& key) -> Result<std::shared_ptr<agent::LlmClient>> {
      return fail(Errc::kInvalid, "no model '" + key + "' in this test");
    };
  }
  TrialRig(const TrialRig&) = delete;  // env.models may point into the rig
  TrialRig& operator=(const TrialRig&) = delete;

  trial::TrialResult run(const manifest::TaskConfig& task, trial::AgentChoice choice) {
    return trial::run_trial(task, 0, 1, choice, env);
  }
  // The run's containers now.
  std::vector<engine::ContainerSummary> containers() const {
    auto cs = engine::list_containers(*docker_env().client, run_filter(env.run_id));
    REQUIRE_MESSAGE(cs.has_value(), (cs ? "" : cs.error().what()));
    return *cs;
  }
  // No container and no network of the run is left (the verifier's and grader's included).
  bool left_nothing() const {
    auto nets = engine::list_networks(*docker_env().client, run_filter(env.run_id));
    REQUIRE_MESSAGE(nets.has_value(), (nets ? "" : nets.error().what()));
    return containers().empty() && nets->empty();
  }
};

// A rig whose models.agent is `provider`/`name` on the scripted server; every model key of
// cfg.models resolves against it, each call through the rig's budget.
struct LlmTrialRig : TrialRig {
  LlmHarness h;

  LlmTrialRig(const std::string& provider, const std::string& name, std::optional<double> budget_usd = std::nullopt,
              const std::string& run_prefix = "t")
      : TrialRig(run_prefix, budget_usd) {
    cfg.models["agent"] = h.model(provider, name);
    env.models = [this](const std::string& key) -> Result<std::shared_ptr<agent::LlmClient>> {
      auto it = cfg.models.find(key);
      if (it == cfg.models.end()) return fail(Errc::kInvalid, "no model '" + key + "'");
      auto c = agent::make_llm_client(it->second, h.ctx);
      if (!c) return c.fail();
      return agent::budgeted(std::shared_ptr<agent::LlmClient>(std::move(*c)), budget);
    };
  }
  trial::TrialResult run_llm(const manifest::TaskConfig& task) { return run(task, {trial::AgentChoice::Kind::kLlm}); }
  // Waits (polling) until the server has received `n` requests; false when `within` passed first.
  bool wait_for_requests(std::size_t n, std::chrono::seconds within) const {
    auto until = std::chrono::steady_clock::now() + within;
    while (h.server.requests().size() < n && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return h.server.requests().size() >= n;
  }
};

// The trial's error and the grade's reasons, one a line (for CAPTURE and substring checks).
inline std::string reasons_of(const trial::TrialResult& r) {
  std::string out = r.error + "\n";
  for (const auto& l : r.grade.reasons) out += l + "\n";
  return out;
}

}  // namespace forge::test
