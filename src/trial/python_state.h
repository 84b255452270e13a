// The state store of a trial whose domain state lives in Tolokaforge's Python tool server: the
// agent's server read once through its internal state tool, and golden replay on a fresh server,
// in a fresh container of forgectl/python:local the agent never reached, seeded with the state the
// agent's server started from (docs/task.md, "Python tool servers").
#pragma once

#include <string>
#include <vector>

#include "engine/client.h"
#include "grading/evidence.h"
#include "manifest/grading_config.h"
#include "manifest/tools_config.h"
#include "stack/labels.h"
#include "trial/golden_cache.h"
#include "trial/golden_replay.h"
#include "trial/trial_result.h"

namespace forge::trial {

struct PythonServerGolden {
  engine::Client* docker = nullptr;
  manifest::McpServerConfig server;
  stack::StackLabels labels;  // the trial's stack: the golden container's labels, so teardown finds a leftover
  std::string initial_state;  // JSON object: what the agent's server held before the agent ran
  std::vector<std::string> unstable_fields;
  GoldenLimits limits;
  Millis start_timeout{60000};
  Millis call_timeout{30000};
  // The golden state once per run (golden_cache.h; null: every trial replays its own): computed on
  // fresh servers seeded from the task's own json_db (`task_initial_state`; empty: the server keeps
  // what its script loaded), never from anything of the trial's.
  GoldenCache* cache = nullptr;
  std::string task_id;
  std::string task_initial_state;
  const manifest::HashCheck* hash = nullptr;
  GoldenUse* use = nullptr;  // where the trial's record learns how its expected state was had
};

class PythonStateStore final : public grading::StateStore {
 public:
  // `final_state`: the agent's server's state after the episode (a JSON object's text).
  PythonStateStore(std::string final_state, PythonServerGolden golden)
      : final_(std::move(final_state)), golden_(std::move(golden)) {}

  Result<std::string> state_json() override { return final_; }
  Result<std::string> stable_hash() override;
  Result<std::string> stable_state_json() override;
  // The run's golden state when the cache has a deterministic one; else a fresh container and
  // server seeded with initial_state, which the returned state removes when destroyed.
  Result<std::unique_ptr<grading::GoldenState>> golden_from_initial() override;

 private:
  std::unique_ptr<grading::GoldenState> from_cache();
  std::string final_;
  PythonServerGolden golden_;
};

// The hash's state: the unstable fields dropped, as Python's sorted compact JSON; and its SHA-256.
Result<std::string> python_stable_json(const std::string& state_json, const std::vector<std::string>& unstable);

// The content key of a task's golden state: everything golden replay reads — the task, its golden
// actions, its json_db, its unstable fields, the server's code and command, the Python image.
Result<std::string> python_golden_key(const PythonServerGolden& g);

// One golden replay computed from the task alone: a fresh container and server seeded with
// g.task_initial_state, every golden action of *g.hash applied (refusals recorded), its stable state.
Result<GoldenReplay> replay_golden_from_task(const PythonServerGolden& g);

// Every golden action of `hash` (when enabled) names one of the server's tools (`tools`), within
// `limits`: setup errors, the same on every trial.
Status check_server_golden_actions(const manifest::HashCheck& hash, const std::vector<std::string>& tools,
                                   const GoldenLimits& limits = {});

}  // namespace forge::trial
