// A sweep's plan: the tasks (all loaded, so validated, before any trial starts), the matrix of
// tasks × agents × trial indexes that falls in this shard, and each trial's content key.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/client.h"
#include "manifest/run_config.h"
#include "manifest/task_config.h"
#include "sweep/run.h"

namespace forge::sweep {

struct Job {
  const manifest::TaskConfig* task = nullptr;
  AgentChoice agent;
  int index = 0;
  std::string key;      // trial_key(): content of task, images, agent, index
  std::string rel_dir;  // under trials/
};

struct Plan {
  std::vector<manifest::TaskConfig> tasks;  // never resized once jobs point into it
  std::vector<Job> jobs;                    // this shard's, in task, agent, index order
  PlanFacts facts;
  int networks_per_trial = 1;               // the most any task's stack needs (subnet admission)
};

// Loads every task, resolves the images their stacks run on `primary` (a missing one is an error
// naming task, service and image, before anything starts) and builds this shard's jobs.
Result<std::unique_ptr<Plan>> make_plan(const RunOptions& opts, const manifest::RunConfig& run, engine::Client& primary);

}  // namespace forge::sweep
