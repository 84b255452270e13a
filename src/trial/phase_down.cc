// The down phase: the trial's stack removed, or handed to the sweep's background teardown.
#include "trial/trial_run.h"

#include "stack/teardown.h"
#include "trial/egress_use.h"

namespace forge::trial {

// The stack removed under a `down` slot, or handed to the background teardown; the tools closed first.
void TrialRun::down() {
  discard_grader_ahead();  // before the stack goes: nothing is created in it afterwards
  if (!up_) return;
  progress("down");
  std::string who = "trial " + r_.task_id + "/" + std::to_string(r_.trial_index);
  keep_egress_ledger(who);
  if (!local_ && env_.teardown) {  // off the critical path: the trial is done once graded
    tools_ = {};  // the helper channel and MCP session end before their containers do
    browser_.reset();
    return env_.teardown->submit_stack(docker_, up_->name, who);
  }
  Slots::Hold hold(slot(env_.admission, &Admission::down));
  PhaseTimer t(r_, "down");
  tools_ = {};
  browser_.reset();
  if (local_) return local_->down(docker_, env_.log);
  auto rep = stack::remove_stack(docker_, up_->name);
  if (!rep.clean()) note("WARNING", "trial", "teardown: " + rep.errors.front());
  if (!rep.clean() && env_.log) env_.log->warn(who + ": teardown: " + rep.errors.front());
}

// The whole ledger, grade phase included, read before the resolver and the proxy go. A ledger
// that cannot be read is noted, never fatal: the trial's grade stands on what grading read.
void TrialRun::keep_egress_ledger(const std::string& who) {
  auto ledger = read_egress_ledger(docker_, *up_, phase_marks_);
  if (ledger) {
    r_.egress = std::move(*ledger);
    if (r_.egress && grading_ && r_.outcome == results::Outcome::kGraded)
      grading::regate_egress(task_.grading, *r_.egress, r_.grade);
    return;
  }
  note("WARNING", "trial", "egress ledger: " + ledger.error().what());
  if (env_.log) env_.log->warn(who + ": egress ledger: " + ledger.error().what());
}

}  // namespace forge::trial
