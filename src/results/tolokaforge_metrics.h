// Tolokaforge's run-level metrics files (aggregate.json, per_task_metrics.json,
// metadata_slices.json) with its key names, computed from trials.jsonl records of one agent; where
// forgectl counts differently (each trial once, infra errors outside, the true pass^k beside
// Tolokaforge's pass_hat) docs/metrics.md, "Tolokaforge files", says so.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "results/trial_record.h"

namespace forge::results::tolokaforge {

inline constexpr std::array<int, 3> kPassK = {1, 5, 10};

// One task's row of per_task_metrics.json. Every rate and mean is over the graded trials;
// std::nullopt is JSON null (nothing to average, or k > graded trials).
struct TaskMetrics {
  std::string task_id;
  std::string category, complexity;  // empty: null in the file
  std::vector<std::string> tags, expected_failure_modes;
  int total_trials = 0;  // graded trials only: the denominator of every rate
  int successful_trials = 0;
  int infra_errors = 0;  // the task's trials that were not graded (forgectl's key)
  std::optional<double> success_rate;
  std::array<std::optional<double>, kPassK.size()> pass_at, tau_pass_hat;
  std::optional<double> avg_score, avg_latency_s, avg_turns, avg_tool_calls, avg_tokens_input, avg_tokens_output;
  std::optional<double> total_cost_usd, avg_cost_usd;  // over trials whose cost is known
  std::optional<double> latency_p50_s, latency_p90_s, latency_p99_s;
  std::optional<double> stuck_rate;
  double tokens_input = 0, tokens_output = 0;  // sums over graded trials, for the run's totals
  std::vector<double> latencies;               // graded trials' duration_s, for the global percentiles
};

// The rows of `trials` (one agent's, each trial once), by task_id.
std::vector<TaskMetrics> task_metrics(std::span<const TrialRecord* const> trials);

// per_task_metrics.json: a list of rows, indented.
Result<std::string> per_task_metrics_json(const std::vector<TaskMetrics>& tasks);
// aggregate.json: the flat aggregate of `tasks`, with the global latency percentiles.
Result<std::string> aggregate_json(const std::vector<TaskMetrics>& tasks);
// metadata_slices.json: {by_benchmark_type, by_complexity, by_tag, by_expected_failure_mode},
// each {value: aggregate of the tasks with that value}.
Result<std::string> metadata_slices_json(const std::vector<TaskMetrics>& tasks);

}  // namespace forge::results::tolokaforge
