// A sweep's plan: the tasks (all loaded, so validated, before any trial starts), the matrix of
// tasks × agents × trial indexes that falls in this shard, and each trial's content key.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/llm_context.h"
#include "manifest/run_config.h"
#include "manifest/task_config.h"
#include "sweep/shard.h"
#include "sweep/trial_runner.h"
#include "trial/preflight.h"

namespace forge::sweep {

// What run.json records about the plan.
struct PlanFacts {
  std::string config_hash;  // shards of one run share it (forgectl merge checks)
  std::map<std::string, std::string> images;  // ref → id on the first engine
  std::vector<std::string> engines;
};

struct PlanInput {
  std::vector<std::string> task_paths;  // task dirs, task.yaml files, or dirs searched for task.yaml
  std::vector<trial::AgentChoice> agents;
  int trials = 1;
  // --canary: one trial per task of each cheat canary (agent/canary.h) besides `agents`' trials,
  // keyed and laid out so that none of the agents' keys or directories changes (docs/sweeps.md).
  bool canary = false;
  Shard shard;
  const manifest::RunConfig* run = nullptr;
  const agent::LlmContext* llm = nullptr;  // model entries and keys are checked through it
  manifest::ExecutorKind executor = manifest::ExecutorKind::kContainer;  // --executor local: every task local
  bool allow_local = false;  // --allow-local: tasks' own tools.executor: local are honoured (preflight.h)
  // The daemon's default OCI runtime, asked only when a container task runs under `auto`: a trial
  // under a daemon whose default is runsc is not the runc trial of the same key. Unset: "runc".
  std::function<Result<std::string>()> default_runtime;
};

struct Plan {
  std::vector<manifest::TaskConfig> tasks;  // never resized once jobs point into it
  std::vector<Job> jobs;                    // this shard's, in task, agent, index order
  PlanFacts facts;
  int networks_per_trial = 0;               // the most any task's stack needs (subnet admission; 0: none)
  std::size_t local_tasks = 0;              // tasks on the local executor (the run's warning names them)
  std::vector<trial::Problem> warnings;     // the tasks' warnings (keys without effect): printed once, never failing
  // Some trial needs a Docker engine: a container task, or a local one with test scripts. false:
  // the run never connects to one.
  bool needs_engine = false;
  std::size_t agent_count = 0;  // the agents', canaries not counted
  std::size_t canary_trials = 0;  // the whole matrix's canary trials (0: no --canary)
  int trials = 0;
  Shard shard;
};

// The id of image `ref` on the engine trials run on; an error when it is not there.
using ImageResolver = std::function<Result<std::string>(const std::string& ref)>;

// Loads and preflight-checks every task (load_task_set: every problem of every task at once, a
// kInvalid), resolves the images their stacks run (a missing one is an error naming task,
// service and image, before anything starts; a local task's only image is its grader's, for
// test scripts) and builds this shard's jobs: per task the agents' trials, then with `canary` one
// trial of each canary (index 0, in trials/<task>/canary-<strategy>/0). `images` is called only when some task needs one.
Result<std::unique_ptr<Plan>> make_plan(const PlanInput& in, const ImageResolver& images);

}  // namespace forge::sweep
