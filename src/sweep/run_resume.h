// Bringing a run directory's durable state in line with this invocation's plan before any trial
// starts: a fresh run refuses a directory that holds one; --resume keeps what is finished.
#pragma once

#include <set>
#include <string>

#include "core/log.h"
#include "sweep/run_state.h"

namespace forge::sweep {

struct ResumePoint {
  std::set<std::string> done;  // keys whose result is in trials.jsonl: skipped
  int recovered = 0;           // attempts left running by a dead process, now to be redone
  int superseded = 0;          // lines of trials no longer in the plan (changed tasks), moved aside
  int torn = 0;                // a last line cut short by a crash, dropped (its trial is redone)
  int infra_retried = 0;       // infra-error results moved aside: an infra failure is not a result
  double spent_usd = 0;        // what the finished trials cost: the budget counts it
};

// The plan's keys must already be in `state` (RunState::plan). Without `resume`, a directory
// with results or state is refused. With it: stale running attempts become interrupted,
// trials.jsonl is rewritten to the plan's graded lines (infra errors and lines of trials no
// longer planned go to trials.superseded.jsonl, a torn last line is dropped; those trials run
// again) and its trials are marked done.
Result<ResumePoint> reconcile_run_dir(RunState& state, const std::string& dir, const std::set<std::string>& plan_keys,
                                      bool resume);

}  // namespace forge::sweep
