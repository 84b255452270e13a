// `forgectl run`: the sweep. A plan's trials (one shard of tasks × agents × trials) scheduled at a
// concurrency through a TrialRunner, every finished trial appended durably to trials.jsonl and
// tracked in DIR/state.sqlite3 so an interrupted run resumes where it stopped; infra errors
// retried with a new attempt number; a setup error stops the run; reports at the end.
#pragma once

#include <atomic>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "agent/budget.h"
#include "results/run_dir.h"
#include "sweep/progress.h"
#include "sweep/run_plan.h"
#include "sweep/trial_runner.h"
#include "sweep/warm_pool.h"

namespace forge::sweep {

struct RunOptions {
  int concurrency = 1;
  int retries = 0;  // infra errors retried this many times in a fresh sandbox (max_attempt_retries)
  bool resume = false;
  bool tty = false;  // live status line instead of plain lines
  std::int64_t lease_s = 3600;  // how long an attempt may run before another process may redo it
  std::string run_id;
  agent::Budget* budget = nullptr;  // resumed runs count what finished trials spent
  const std::atomic<int>* interrupted = nullptr;
  // The trials' logger writes here: while the sweep runs its lines become the live view's events.
  LineSink* log_sink = nullptr;
  // The validity gate's threshold in % (results/validity.h): more infra errors mark the run INVALID.
  double max_infra_rate = 5.0;
};

struct RunSummary {
  std::string run_id;
  int planned = 0;       // trials of this shard of the matrix
  int skipped = 0;       // already finished before this invocation (resume)
  int ran = 0;           // finished in this invocation
  int interrupted = 0;   // stopped by SIGINT/SIGTERM: left for --resume
  int trials = 0, infra_errors = 0;  // over every finished trial of the plan, canaries' too
  int passed = 0, graded = 0;        // the agents' trials only: a canary's pass is no agent's
  // The cheat canaries' (--canary): graded, passed (a cheat that worked), and one warning per task
  // a canary passed (results::canary_warnings).
  int canary_graded = 0, canary_cheated = 0;
  std::vector<std::string> canary_warnings;
  double cost_usd = 0;
  Millis elapsed{0};
  std::string stopped;            // why the run stopped early; empty: it did not
  bool setup_error = false;       // it stopped on a setup error (exit 2)
  std::string table;              // the end-of-run table
  std::vector<std::string> leaks;  // objects of this run still on an engine after the last trial
  int concurrency = 0;            // as used (lowered when the runner cannot give more)
  PoolStats pool;                 // the warm pool's counts (all 0: no pool)
  // The validity gate over every finished trial (results/validity.h); invalid_reason empty when valid.
  bool valid = true;
  std::string invalid_reason;
};

// Writes run.json: before the first trial (null) and at the end.
using DescribeRun = std::function<Status(const RunSummary*)>;

Result<RunSummary> run_sweep(const RunOptions& o, const Plan& plan, TrialRunner& runner, results::RunDir& dir,
                             const DescribeRun& describe, std::ostream& progress);

}  // namespace forge::sweep
