// Splitting a run's trial matrix across machines (`forgectl run --shard i/N`), by a stable hash.
#pragma once

#include <string>
#include <string_view>

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

}  // namespace forge::sweep
