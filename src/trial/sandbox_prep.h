// A trial's sandbox, brought up by the trial's own up phase or ahead of it by the sweep's warm
// pool (sweep/warm_pool.h): the same options either way, so a prepared sandbox is exactly what
// the trial would have made itself. A prepared sandbox belongs to one trial and is never reused.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "manifest/task_config.h"
#include "stack/up.h"
#include "trial/trial.h"

namespace forge::trial {

struct PreparedSandbox {
  stack::UpResult up;
  std::string control_token;  // json-db's; never logged, never given to a tool or the runner
  Clock::time_point ready_at{};
};

// How long a trial's stacks and containers are leased: its episode timeout and an hour (12 h
// without a run config). The lease matters once the owner cannot be asked (inventory.h).
std::chrono::seconds trial_lease(const TrialEnv& env);

// up_stack for one trial of `task` with the sweep's options (attached to the run, its lease, no
// network when none is needed, json-db's control token in json-db's environment only). The
// caller holds whatever admission slot it needs. `on_planned`: stack::UpOptions::on_planned.
Result<PreparedSandbox> bring_up(
    const manifest::TaskConfig& task, const TrialEnv& env, std::string control_token,
    std::function<void(const stack::StackLabels&, const policy::StackPlan&)> on_planned = {});

}  // namespace forge::trial
