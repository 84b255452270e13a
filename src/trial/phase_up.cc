// The up phase: a slot to create the stack (reserve), then the trial's sandbox up.
#include "trial/trial_run.h"

#include "core/service_token.h"
#include "policy/topology.h"
#include "trial/enforced_networks.h"

namespace forge::trial {

using results::InfraKind;

// Reserve: a stack-creation slot waited for (timed as "reserve"); then the trial's stack up with
// json-db's control token, or the local executor's sandbox in its place.
Step TrialRun::up() {
  if (runs_locally(task_)) {  // the local executor: a host directory instead of containers
    r_.unconfined = true;
    auto l = LocalTrial::start(task_, r_.trial_index, r_.attempt, env_);
    if (!l) return classify(l.error(), InfraKind::kHost);
    local_ = std::move(*l);
    up_ = local_->stack();
    r_.stack = up_->name;
    record_networks();
    return std::nullopt;
  }
  auto waited = Clock::now();
  progress("reserve");
  Slots::Hold hold(slot(env_.admission, &Admission::up), env_.up_priority);
  if (env_.admission && !env_.admission->up_pace.wait(env_.interrupted)) return Fault::interruption();
  progress("up");
  r_.phases["reserve"] = elapsed_since(waited);  // admission: a stack-creation slot, then --max-up-rate's turn
  if (interrupted()) return Fault::interruption();
  PhaseTimer t(r_, "up");
  // json-db's control token: in json-db's own environment and in this process, nowhere else.
  auto token = new_control_token();
  if (!token) return classify(token.error(), InfraKind::kHost);
  // A test-script or checks.py grader needs only the stack's labels and image: made from the
  // moment they are known, beside the rest of up, so an agent that ends quickly waits for less.
  auto u =
      bring_up(task_, env_, std::move(*token), [this](const stack::StackLabels& labels, const policy::StackPlan& plan) {
        start_grader_ahead(labels, plan.runner.image, plan.runner.workdir);
      });
  if (!u) return classify(u.error(), InfraKind::kDaemon);
  adopt(std::move(*u));
  return std::nullopt;
}

void TrialRun::adopt(PreparedSandbox&& p) {
  control_token_ = std::move(p.control_token);
  up_ = std::move(p.up);
  r_.stack = up_->name;
  r_.runtime = up_->runtime;
  runner_ = up_->containers.at(policy::kRunnerKey);
  record_networks();
}

// What each phase runs under, as planned; a runner that moves gets its agent entry once the move is verified.
void TrialRun::record_networks() {
  auto n = enforced_networks(task_, env_.run->harbor_shared_verifier);
  r_.networks = {{"setup", n.setup.policy}, {"grade", n.grade.policy}};
  if (!up_ || !up_->plan.runner_moves) r_.networks["agent"] = n.agent.policy;
}

}  // namespace forge::trial
