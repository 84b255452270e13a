// The fork and pace flags of `forgectl run` that --resume keeps (docs/sweeps.md "Resume"): recorded
// in run.json's invocation, and restored for each one the resuming command line leaves out.
#pragma once

#include <functional>
#include <string>

#include "results/run_json.h"

namespace forge::cli {

struct ForkPaceFlags {
  bool no_fork = false;         // --no-fork
  bool keep_snapshots = false;  // --keep-snapshots
  std::string max_up_rate;      // --max-up-rate as given; "": no pace
};

void record_fork_pace(const ForkPaceFlags& f, results::RunInvocation& inv);

// `given(flag)`: whether the resuming command line gave the flag ("--no-fork"); one it gave wins.
void resume_fork_pace(const results::RunInvocation& inv, const std::function<bool(const char* flag)>& given,
                      ForkPaceFlags& f);

}  // namespace forge::cli
