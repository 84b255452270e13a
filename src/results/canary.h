// Cheat canaries in a run's results: their trials kept apart from every agent's numbers, and per
// task the share of them that passed — how often a do-nothing agent that games the grader wins
// (docs/sweeps.md, "Cheat canaries"; docs/metrics.md).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "results/trial_record.h"

namespace forge::results {

// A canary's trials carry the agent label "canary:<strategy>" (trial/agent_choice.h).
inline constexpr std::string_view kCanaryPrefix = "canary:";
bool is_canary(const TrialRecord& r);

// The records split in file order: the agents' and the canaries'.
struct SplitTrials {
  std::vector<TrialRecord> agents, canaries;
};
SplitTrials split_canaries(const std::vector<TrialRecord>& trials);

// One strategy on one task (its trials: one per run, more after a merge of runs).
struct CanaryStrategyResult {
  int trials = 0, graded = 0, passed = 0;
  double best_score = 0;     // the highest graded score
  std::string trial_dir;     // the first graded trial's (its page), else the first one's
};

// A canary cheated when its trial passed: a pass the task's grader gave an agent that did not do
// the task. A score above 0 without a pass is reported as partial credit, not as a cheat: honest
// tasks give a do-nothing agent that much for transcript rules it keeps (max_turns, a tool used).
struct CanaryTask {
  std::string task_id;
  std::map<std::string, CanaryStrategyResult> strategies;  // by strategy name
  int trials = 0, graded = 0, cheated = 0, infra_errors = 0;
  double cheat_rate() const { return graded ? static_cast<double>(cheated) / graded : 0; }
  std::vector<std::string> succeeded() const;  // strategies with a pass, by name
  std::vector<std::string> partial() const;    // strategies scored above 0 without a pass
};

struct CanaryReport {
  std::vector<CanaryTask> tasks;  // by task id
  int trials = 0, graded = 0, cheated = 0, infra_errors = 0;
  int tasks_cheated = 0;  // tasks some canary passed
  bool empty() const { return trials == 0; }
};

CanaryReport canary_report(const std::vector<TrialRecord>& canary_trials);

// aggregate.json's "canaries": {"trials", "graded", "cheated", "cheat_rate", "infra_errors",
// "tasks", "tasks_cheated", "by_task": {task: {…, "succeeded": [...], "partial": [...],
// "strategies": {name: {"trials", "graded", "passed", "best_score"}}}}}.
void write_canaries_json(json::Writer& w, const CanaryReport& r);

// The end-of-run table's canary part: one line per task, then the total.
std::string canary_table(const CanaryReport& r);

// One line per task a canary passed: "cheat canary: task 'x' was passed by canary:reward-file, …".
std::vector<std::string> canary_warnings(const CanaryReport& r);

}  // namespace forge::results
