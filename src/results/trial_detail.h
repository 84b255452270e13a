// trial.json: everything one trial's page shows — the transcript, the tool calls with their
// results, the grade with its reasons, the state diff, phase timings — in one struct with one
// writer (the trial layer fills it, already redacted) and one reader (the trial page, `forgectl
// show`). JSON, so results/ reads it with core's JSON alone; the YAML files beside it stay
// Tolokaforge's layout.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace forge::results {

inline constexpr int kTrialDetailVersion = 1;

struct DetailToolCall {  // one call an assistant message asked for
  std::string id, name;  // forgectl's id of the call (what a tool message's tool_call_id names)
  std::string arguments;    // the canonical JSON text (redacted); for refused arguments, the excerpt kept
  std::string provider_id;  // the id the model's provider gave it, when it differs from `id`
  std::string refusal;      // why the arguments were refused ("are refused: nested …"); empty if accepted
};

struct DetailMessage {
  std::string role;  // system | user | assistant | tool
  std::string content, reasoning;
  std::vector<DetailToolCall> tool_calls;  // assistant
  std::string tool_call_id, name;          // tool: which call it answers, the tool's name
  // tool: the images it returned that the trial's directory keeps ("screenshots/001.png",
  // relative to it), and how many more it returned that were dropped (results/screenshots.h)
  std::vector<std::string> images;
  int images_dropped = 0;
};

struct DetailToolLog {    // what the governed executor did with a call
  std::string requestor;  // assistant | user
  std::string tool, arguments;
  std::string outcome;  // ok | refused | failed | timeout | …
  std::string output, error;
  double duration_s = 0;
  bool truncated = false;
};

struct TrialDetail {
  int version = kTrialDetailVersion;
  std::string task_id, task_name, category, difficulty;
  std::vector<std::string> tags;
  std::string agent;
  int trial_index = 0, attempt = 1;
  std::string trial_dir;            // "trials/<task>/<idx>", relative to the run directory
  std::string outcome, infra_kind;  // as trials.jsonl spells them; infra_kind empty unless infra_error
  std::string error, termination_reason;
  std::string started_at, finished_at, docker_host, stack;
  std::map<std::string, double> phases_s;
  std::int64_t turns = 0, tokens_input = 0, tokens_output = 0;
  double cost_usd = 0;
  bool cost_known = true;
  double agent_s = 0;  // the episode's own time
  std::vector<DetailMessage> messages;
  int screenshots = 0, screenshots_dropped = 0;  // kept under screenshots/, and dropped
  std::vector<DetailToolLog> tool_log;
  bool binary_pass = false;
  double score = 0;
  std::map<std::string, double> components;  // only those evaluated
  std::vector<std::string> reasons;          // "<component>: …", one per check
  std::string state_diff_json;               // golden replay's diff; empty when none

  std::string to_json() const;
  static Result<TrialDetail> parse(std::string_view text, std::string_view path);
  static Result<TrialDetail> read(const std::string& path);  // a missing file is kNotFound
};

}  // namespace forge::results
