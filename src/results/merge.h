// `forgectl merge`: several run directories (the shards of one run) into one new run directory.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "results/trial_record.h"

namespace forge::results {

struct MergeOptions {
  bool force = false;    // merge even when the sources' run.json carry different config_hash
  bool partial = false;  // merge even when a source is missing or unfinished, or a shard is absent
};

struct MergeSource {
  std::string path;         // absolute
  std::string run_id;       // from its run.json; empty without one
  std::string shard;        // "i/N" from its run.json; empty when not sharded
  std::string config_hash;  // from its run.json; empty when absent
  int trials = 0;           // records read from its trials.jsonl
};

struct MergeReport {
  std::vector<MergeSource> sources;
  std::vector<TrialRecord> trials;        // as written to the merged trials.jsonl, sorted
  int duplicates = 0;                     // trials recorded by more than one source (one kept)
  std::vector<std::string> missing_dirs;  // kept trials whose source has no trials/<task>/<idx>/
  std::vector<std::string> warnings;
};

// Reads every source (a run directory with trials.jsonl) before writing anything. Unless
// `options.partial`, refuses (naming each) sources that do not exist, runs whose run.json says
// they did not finish (running, interrupted, stopped) and, when the sources are shards i/N, every
// index of the split that none of them holds: a merge never silently stands for a smaller run.
// Then creates
// `out_dir` (which must not exist or be empty, and is none of the sources) with the merged
// trials.jsonl (original lines, byte for byte, sorted by task_id, agent, trial_index), each kept
// trial's directory, run.json ("status": "merged", "merged_from": [...]) and the reports.
// A trial in two sources keeps the graded record over an infra_error, else the later finished_at.
// On failure after `out_dir` was created, what was written there is removed.
Result<MergeReport> merge_runs(const std::vector<std::string>& sources, const std::string& out_dir,
                               const MergeOptions& options = {});

}  // namespace forge::results
