// A finished trial in the run directory: trials/<task>/<idx>/{trajectory,grade,metrics,env,task,logs}.yaml
// (env.yaml and logs.yaml: trial_env.h)
// in Tolokaforge's layout (reference/tolokaforge.md §5.5), every file redacted and written
// atomically, and the record trials.jsonl gets for it.
#pragma once

#include <string>

#include "core/result.h"
#include "results/run_dir.h"
#include "results/trial_record.h"
#include "trial/trial_atif.h"
#include "trial/trial_result.h"

namespace forge::trial {

// "<task>/<idx>", or the rel_dir the sweep chose ("<task>/<agent>/<idx>").
std::string rel_dir_of(const TrialResult& t);

Status write_trial_files(const results::RunDir& run, const TrialResult& t, const std::string& task_yaml_summary);

results::TrialRecord to_record(const TrialResult& t);

}  // namespace forge::trial
