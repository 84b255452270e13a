// Splitting a run's trial matrix across machines (`forgectl run --shard i/N`), by a stable hash.
#pragma once

#include <string>
#include <string_view>

#include "core/host_settings.h"
#include "core/result.h"

namespace forge::sweep {

// "i/N" with 0 <= i < N, 0-based like SLURM_ARRAY_TASK_ID under --array=0-(N-1). The default is
// the whole matrix.
struct Shard {
  int index = 0;
  int count = 1;
};

// Parses "i/N" (digits only, nothing around them); errors are kInvalid and quote `text`.
Result<Shard> parse_shard(std::string_view text);

// Whether trial `trial_index` of (task, agent) is this shard's. Decided by SHA-256 of
// "task_id\x1fagent\x1ftrial_index" alone, so the split does not depend on the order tasks are
// given in, is the same on every machine and build, and adding a task moves no other trial.
bool in_shard(const Shard& s, const std::string& task_id, const std::string& agent, int trial_index);

// "1/4"
std::string to_string(const Shard& s);

// `--shard auto`: this Slurm array task's shard. The index is SLURM_ARRAY_TASK_ID minus
// SLURM_ARRAY_TASK_MIN and the count SLURM_ARRAY_TASK_COUNT, so --array=0-3 and --array=1-4 both
// give 4 shards; an array with gaps (--array=0,2) is refused, since its missing indexes would be
// shards nobody runs. Outside an array job: kInvalid saying so.
Result<Shard> shard_from_slurm(const HostSettings::Slurm& slurm);

// Where the shard of an array writes under the shared --out DIR: DIR/shards/<i>-of-<N>, so every
// task of the array is given the same --out, and shards of another split never share a directory.
std::string shard_dir(const std::string& out, const Shard& s);

}  // namespace forge::sweep
