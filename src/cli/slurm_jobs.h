// `forgectl slurm`'s parts that need no Slurm: the batch scripts it submits, the job id sbatch
// prints, squeue's lines, and each shard's progress as its run directory tells it (docs/scale.md).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace forge::cli::slurm {

// What `forgectl slurm submit` submits.
struct SubmitSpec {
  std::string forgectl;  // absolute path of the forgectl binary every node runs
  std::string out;       // absolute --out DIR, on a filesystem every node shares
  int shards = 1;
  int cpus_per_shard = 1;             // each shard's --cpus-per-task: its --concurrency
  std::vector<std::string> run_args;  // after `forgectl run`: TASKS (absolute) and the run's flags
};

std::string files_dir(const std::string& out);   // DIR/slurm: scripts, logs/, submit.json
std::string merged_dir(const std::string& out);  // DIR/merged: the merged run

// POSIX shell single quotes around `s`.
std::string shell_quote(std::string_view s);

// The array job: N tasks, each `forgectl run … --out DIR --shard auto --resume --build-images` on
// its node, requeued when its node fails; its log appended to DIR/slurm/logs/shard-<i>.out.
std::string shard_script(const SubmitSpec& spec);
// The merge job (submitted with --dependency=afterany on the array): `forgectl merge --out
// DIR/merged` of every shard's directory, so a missing or unfinished shard is named, not dropped.
std::string merge_script(const SubmitSpec& spec);

// `sbatch --parsable` prints "jobid" or "jobid;cluster".
Result<std::string> parse_job_id(std::string_view sbatch_output);

// One job of `squeue -h -r -t all -o '%i|%T|%r|%N'` (array tasks as "<array>_<index>").
struct QueuedJob {
  std::string id, state, reason, node;
};
// By job id; lines that are not four fields are skipped, at most limits::kMaxSlurmQueueLines read.
std::map<std::string, QueuedJob> parse_squeue(std::string_view text);

// A shard as its run directory tells it.
struct ShardProgress {
  bool started = false;                                    // run.json exists
  std::string status;                                      // run.json's: running | completed | interrupted | stopped
  std::string started_at;                                  // run.json's, UTC ISO 8601
  int planned = -1;                                        // trials the shard plans; -1 until it has planned
  int done = 0, graded = 0, passed = 0, infra_errors = 0;  // from trials.jsonl
  double cost_usd = 0;
  bool cost_partial = false;  // a trial's price is unknown
};
// Reads DIR/run.json and DIR/trials.jsonl (neither need exist yet); an unreadable file is an error.
Result<ShardProgress> read_shard(const std::string& dir);

}  // namespace forge::cli::slurm
