// A run directory's derived files (aggregate.json, report.html, each trial's trial.html) and the
// end-of-run table.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "results/aggregate.h"
#include "results/trial_record.h"

namespace forge::results {

// Reads DIR/trials.jsonl (and DIR/run.json when present), then writes DIR/aggregate.json,
// DIR/tolokaforge/… (tolokaforge_files.h), DIR/report.html and trials/<…>/trial.html for every
// trial whose trial_dir is safe (from its trial.json when there is one), each atomically. A missing DIR or trials.jsonl is kNotFound
// naming the path.
Status write_reports(const std::string& dir, const AggregateOptions& options = {});
// The same from trials already read (forgectl report prints the table from them too).
Status write_reports(const std::string& dir, const std::vector<TrialRecord>& trials,
                     const AggregateOptions& options = {});

// The validity gate's threshold a run directory's reports use: run.json's max_infra_rate, else
// the default (validity.h).
double max_infra_rate_of(const std::string& dir);

// The plain-text table printed at the end of a run and by `forgectl report`: per task and agent
// trials, passed, pass rate, mean score, infra errors, cost; then a total line per agent (never
// one pooling several agents) and, with several agents, each comparison's sentence; then each
// agent's egress tries when trials recorded a ledger, the cheat canaries' table (canary_table),
// whose trials are in none of the lines above, and "INVALID: <why>" when the run's infra errors
// pass options.max_infra_rate (default 5 %).
Result<std::string> summary_table(const std::vector<TrialRecord>& trials, const AggregateOptions& options = {});

}  // namespace forge::results
