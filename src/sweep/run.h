// `forgectl run`: the sweep. A matrix of tasks × agents × trials (one shard of it), scheduled
// over one or more Docker engines with admission limits, every finished trial appended durably to
// trials.jsonl and tracked in DIR/state.sqlite3, so an interrupted run resumes where it stopped;
// infra failures retried in a fresh sandbox with a new attempt number; reports and a leak audit
// at the end.
#pragma once

#include <atomic>
#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "sweep/hosts.h"
#include "sweep/outputs.h"
#include "sweep/shard.h"
#include "sweep/trial.h"

namespace forge::sweep {

struct AdmissionLimits {
  int builds = 1;  // image builds at once (local images, compose `build:`)
  int ups = 4;     // stacks being created at once, over all engines
  int downs = 4;   // stacks being torn down at once
  int execs = 0;   // tool calls running at once (0: only the concurrency limits them)
  int grades = 2;  // grading phases at once (grader containers)
};

// What run.json records about the plan, filled by run_sweep.
struct PlanFacts {
  std::string config_hash;  // shards of one run share it (forgectl merge checks)
  std::map<std::string, std::string> images;  // ref → id on the first engine
  std::vector<std::string> engines;
};

struct RunSummary;

struct RunOptions {
  std::vector<std::string> task_paths;  // task dirs, task.yaml files, or dirs searched for task.yaml
  std::vector<AgentChoice> agents{AgentChoice{}};
  int trials = 1;
  int concurrency = 1;
  bool resume = false;
  Shard shard;
  AdmissionLimits limits;
  bool tty = false;  // live status line instead of plain lines
  // run.json's text from the plan's facts and, at the end, the summary (null before).
  std::function<std::string(const PlanFacts&, const RunSummary*)> describe;
};

struct RunSummary {
  std::string run_id;
  int planned = 0;       // trials of this shard of the matrix
  int skipped = 0;       // already finished before this invocation (resume)
  int ran = 0;           // finished in this invocation
  int interrupted = 0;   // stopped by SIGINT: left for --resume
  int trials = 0, passed = 0, graded = 0, infra_errors = 0;  // over every finished trial of the plan
  double cost_usd = 0;
  Millis elapsed{0};
  std::string stopped;            // why the run stopped early (a key or model problem); empty: it did not
  std::string table;              // the end-of-run table
  std::vector<std::string> leaks;  // objects of this run still on an engine after the last trial
  int concurrency = 0;            // as used (lowered when the subnet pool is short)
};

// Finds the task.yaml files the paths name.
Result<std::vector<std::string>> discover_tasks(const std::vector<std::string>& paths, const std::string& glob);

// `base` carries the run config, models, budget, run id, log and interrupt flag; its docker and
// admission fields are set per trial.
Result<RunSummary> run_sweep(const RunOptions& opts, TrialEnv& base, HostPool& hosts, RunWriter& writer,
                             std::ostream& progress);

}  // namespace forge::sweep
