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
#include "trial/golden_replay.h"

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
};

class PythonStateStore final : public grading::StateStore {
 public:
  // `final_state`: the agent's server's state after the episode (a JSON object's text).
  PythonStateStore(std::string final_state, PythonServerGolden golden)
      : final_(std::move(final_state)), golden_(std::move(golden)) {}

  Result<std::string> state_json() override { return final_; }
  Result<std::string> stable_hash() override;
  Result<std::string> stable_state_json() override;
  // A fresh container and server; the returned state removes the container when destroyed.
  Result<std::unique_ptr<grading::GoldenState>> golden_from_initial() override;

 private:
  std::string final_;
  PythonServerGolden golden_;
};

// The hash's state: the unstable fields dropped, as Python's sorted compact JSON; and its SHA-256.
Result<std::string> python_stable_json(const std::string& state_json, const std::vector<std::string>& unstable);

// Every golden action of `hash` (when enabled) names one of the server's tools (`tools`), within
// `limits`: setup errors, the same on every trial.
Status check_server_golden_actions(const manifest::HashCheck& hash, const std::vector<std::string>& tools,
                                   const GoldenLimits& limits = {});

}  // namespace forge::trial
