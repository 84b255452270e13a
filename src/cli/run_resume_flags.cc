#include "cli/run_resume_flags.h"

namespace forge::cli {

void record_fork_pace(const ForkPaceFlags& f, results::RunInvocation& inv) {
  inv.no_fork = f.no_fork;
  inv.keep_snapshots = f.keep_snapshots;
  inv.max_up_rate = f.max_up_rate;
}

void resume_fork_pace(const results::RunInvocation& inv, const std::function<bool(const char* flag)>& given,
                      ForkPaceFlags& f) {
  if (!given("--no-fork")) f.no_fork = inv.no_fork;
  if (!given("--keep-snapshots")) f.keep_snapshots = inv.keep_snapshots;
  if (!given("--max-up-rate")) f.max_up_rate = inv.max_up_rate;
}

}  // namespace forge::cli
