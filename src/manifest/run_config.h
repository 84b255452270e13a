// The run config (Tolokaforge's RunConfig, strictly parsed): models, orchestrator limits,
// evaluation inputs. Value types; parsed in run_config_parse.cc.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"

namespace forge::manifest {

struct ModelConfig {
  std::string provider;  // openai | anthropic | openrouter | vllm | ollama | litellm | openai_compatible
  std::string name;
  std::string base_url;     // empty: the provider's default
  std::string api_key_env;  // empty: the provider's default (OPENAI_API_KEY, ANTHROPIC_API_KEY, …)
  double temperature = 0.0;
  std::optional<int> max_tokens, seed;
  std::optional<double> top_p;
  std::string reasoning = "off";  // off | low | medium | high
};

struct StuckHeuristics {
  bool enabled = true;
  int max_repeated_tool_calls = 10;
  int max_idle_turns = 12;
};

struct RunConfig {
  std::string path;                          // empty when built from flags alone
  // forgectl run --env-passthrough NAME: the host variables a Harbor task's "${NAME}" env
  // templates may read (docs/harbor.md "Env values"); a task file alone can name none.
  std::vector<std::string> env_passthrough;
  // forgectl run --harbor-verifier shared: a Harbor task's (or step's) tests run in the agent's own
  // runner after quiescing (Harbor's "shared" mode) instead of a fresh container (docs/harbor.md).
  bool harbor_shared_verifier = false;
  std::map<std::string, ModelConfig> models;  // "agent", "user", "judge", …
  int workers = 1;
  int repeats = 1;                            // trials per task
  std::optional<double> max_budget_usd;
  std::optional<double> max_requests_per_second;
  int max_attempt_retries = 2;                // infra failures only
  // orchestrator.max_infra_rate (forgectl's own) / --max-infra-rate, in %: a run whose infra errors
  // pass it is marked INVALID (results/validity.h); nullopt: the default, 5 %.
  std::optional<double> max_infra_rate;
  Millis turn_timeout{60000};
  Millis episode_timeout{1800000};
  int max_turns = 50;
  StuckHeuristics stuck;
  std::vector<std::string> task_packs;
  std::string tasks_glob = "**/task.yaml";
  std::string output_dir;
  std::string pricing_file;  // overrides manifests/pricing.json
  std::string queue_backend = "sqlite";  // the only one supported
  // orchestrator.runtime / --runtime: the OCI runtime of every trial's runner, over the tasks' own
  // `runtime:`; empty: auto (each task's, else the daemon's default). Tolokaforge's "docker" is auto.
  std::string runtime;
  bool auto_start_services = true;       // stored; forgectl always starts a trial's services
  std::string continue_prompt;           // stored; unused (as in Tolokaforge)
  std::string harness_adapter = "native";  // evaluation.harness_adapter.type
  std::string harness_params_json;       // evaluation.harness_adapter.params, opaque; empty when absent
  bool cache_images = false;             // stored; forgectl caches by content-hash tag anyway
};

}  // namespace forge::manifest
