// What a trial leaves for grading, gathered on the host after the agent loop. Grading trusts
// nothing inside the runner: files come through the archive API, state from the json-db
// service, tests run in a fresh grader container.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/chat.h"
#include "core/egress_entry.h"
#include "core/result.h"

namespace forge::grading {

struct ToolCallRecord {
  std::string requestor;  // "assistant" | "user"
  std::string name;
  std::string arguments_json;
  bool success = true;
};

struct WorkspaceFile {
  std::string path;  // absolute, as the agent saw it: /env/fs/agent-visible/…; "" for `unread` alone
  std::string content;
  // Why `content` is not the file's (empty: it is): "larger than 8 MiB (…)". The agent's doing,
  // so a check fails on it rather than grading failing. An entry with no path carries a note
  // about the whole listing (the workspace holds more entries than are examined).
  std::string unread;
};

// A state made from the trial's initial fixtures for golden replay, apart from the agent's: the
// golden actions apply here through forgectl's own implementation of each tool, never through the
// agent's tool path, its rate limits or anything in its sandbox. Destroying it discards it.
class GoldenState {
 public:
  virtual ~GoldenState() = default;
  // Applies one golden action. An error with a refusal code (grading/replay.h:
  // golden_action_refused: the tool said no) is reported and replayed past; any other code is the
  // store failing; kUnsupported is a tool forgectl cannot replay (a setup error for the caller).
  virtual Status apply(const std::string& tool, const std::string& arguments_json) = 0;
  virtual Result<std::string> stable_hash() = 0;        // as StateStore::stable_hash
  virtual Result<std::string> stable_state_json() = 0;  // as StateStore::stable_state_json
};

// The trial's state for grading: the agent's final state, only ever read, and golden states made
// from the same initial fixtures the agent started from.
class StateStore {
 public:
  virtual ~StateStore() = default;
  virtual Result<std::string> state_json() = 0;    // {"table": [records], …}
  virtual Result<std::string> stable_hash() = 0;   // unstable fields dropped, sorted compact JSON, SHA-256
  // The state the stable hash covers (unstable fields dropped), for the golden-replay diff; a
  // store without unstable fields can keep this default.
  virtual Result<std::string> stable_state_json() { return state_json(); }
  // A fresh golden state from the initial fixtures. Grading never changes the agent's state.
  virtual Result<std::unique_ptr<GoldenState>> golden_from_initial() = 0;
};

struct TestRun {
  int exit_code = -1;
  std::string output;              // stdout+stderr, capped
  std::optional<double> reward;    // from the reward file, when configured
  bool timed_out = false;
  // Why the reward file was there but gave no value (not a regular file, too big, no number): the
  // tests' own output, which the programs they ran could spoil; scored 0, never a grader error.
  std::string reward_spoiled;
};

struct JudgeReply {
  std::string text;
  std::optional<double> cost_usd;
};

struct Evidence {
  std::vector<ChatMessage> messages;  // the transcript: system, user, assistant, tool
  std::vector<ToolCallRecord> tool_calls;
  std::string final_state_json;       // {"db": {…}}; "{}" when the task has no state
  StateStore* state = nullptr;        // null: no json-db in this trial
  // Files of the runner's workspace matching a glob (path_glob checks).
  std::function<Result<std::vector<WorkspaceFile>>(const std::string& glob)> files;
  // The LLM judge (model_ref resolved by the caller): system + user prompt → reply.
  std::function<Result<JudgeReply>(const std::string& model_ref, const std::string& system, const std::string& user)> judge;
  // Test scripts / custom checks in a fresh grader container.
  std::function<Result<TestRun>()> run_tests;
  // Tolokaforge's checks.py in a fresh container of the Python image: the driver's result file
  // (docs/python.md, "Running custom checks") as JSON text.
  std::function<Result<std::string>()> run_checks;
  // The trial's egress ledger (egress.jsonl: its DNS queries and proxied requests), set by the
  // trial layer from one place (trial/phase_grade.cc: TrialRun::evidence). nullopt: no ledger was
  // recorded (a full_internet or local-executor trial); the `egress` rules then cannot grade.
  std::optional<EgressLedger> egress;
};

struct Grade {
  bool binary_pass = false;
  double score = 0;
  // state_checks | transcript_rules | llm_judge | custom_checks | egress → score in [0,1]; absent:
  // not evaluated. egress is 1 or 0 and gates the combined score rather than being weighed.
  std::map<std::string, double> components;
  std::vector<std::string> reasons;  // one per component and check, human-readable
  std::string state_diff_json;       // structured diff when golden replay mismatched
  double judge_cost_usd = 0;
};

}  // namespace forge::grading
