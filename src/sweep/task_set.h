// The tasks of a run or of `forgectl validate`, found, loaded and preflight-checked by one loader,
// so validate refuses exactly what run refuses, with the same messages.
#pragma once

#include <string>
#include <vector>

#include "manifest/task_config.h"
#include "trial/preflight.h"

namespace forge::sweep {

struct TaskSet {
  std::vector<manifest::TaskConfig> tasks;  // the ones that loaded
  // Per path (task.yaml), its problems: load errors, preflight checks, and warnings (keys without
  // effect, which never fail); without an error: ok.
  std::vector<std::pair<std::string, std::vector<trial::Problem>>> per_task;
  std::vector<trial::Problem> run_problems;  // not of one task: paths, agents, models, duplicates
  bool ok() const;             // no error anywhere; warnings do not count
  std::string report() const;  // every problem, errors and warnings, one per line
  std::vector<trial::Problem> warnings() const;  // the run's warnings, then every task's, task by task
};

bool has_errors(const std::vector<trial::Problem>& problems);

// Finds the task.yaml files the paths name. A directory holding `tasks/` and no task.yaml is a
// project: its tasks are found under tasks/ only (not in its data or its old outputs). A directory
// holding a Harbor dataset.toml runs the tasks its manifest names (manifest/harbor/dataset_manifest.h);
// what else it holds is said in a line added to `notes`.
Result<std::vector<std::string>> discover_tasks(const std::vector<std::string>& paths, const std::string& glob,
                                                std::vector<std::string>* notes = nullptr);

// Discovers, loads and checks every task under `paths`.
TaskSet load_task_set(const std::vector<std::string>& paths, const std::string& glob, const trial::PreflightInput& in);

}  // namespace forge::sweep
