// `forgectl run`: tasks × trials through run_trial, each finished trial written at once, a summary
// at the end. Infra failures are retried with a fresh sandbox and a new attempt number.
#pragma once

#include <atomic>
#include <iosfwd>
#include <string>
#include <vector>

#include "sweep/outputs.h"
#include "sweep/trial.h"

namespace forge::sweep {

struct RunOptions {
  std::vector<std::string> task_paths;  // task dirs, task.yaml files, or dirs searched for task.yaml
  AgentChoice agent;
  int trials = 1;
  int concurrency = 1;
  std::string out_dir;
};

struct TaskSummary {
  std::string task_id;
  int trials = 0, passed = 0, infra_errors = 0;
  double score_sum = 0;
};

struct RunSummary {
  std::string run_id;
  std::vector<TaskSummary> tasks;
  int trials = 0, passed = 0, infra_errors = 0;
  double cost_usd = 0;
  Millis elapsed{0};
  std::string stopped;  // why the run stopped early (a provider key or model problem); empty: it did not
};

// Finds the task.yaml files the paths name.
Result<std::vector<std::string>> discover_tasks(const std::vector<std::string>& paths, const std::string& glob);

Result<RunSummary> run_sweep(const RunOptions& opts, TrialEnv& env, RunWriter& writer, std::ostream& progress);

// The end-of-run table.
void print_summary(std::ostream& out, const RunSummary& s);

}  // namespace forge::sweep
