// The setup phase: the initial state into the sandbox, and a Harbor task's environment made ready.
#include "trial/trial_run.h"

#include "stack/workspace.h"
#include "trial/harbor_health.h"
#include "trial/trial_setup.h"

namespace forge::trial {

using results::InfraKind;

// Initial state: fixtures into json-db (by forgectl, with the control token: the agent cannot
// init, reset or restore a namespace), files into the workspace, the task's pages into mock-web.
Step TrialRun::setup() {
  progress("setup");
  PhaseTimer t(r_, "setup");
  if (local_) return local_->setup(r_);
  if (auto it = up_->containers.find("json-db"); it != up_->containers.end()) {
    db_ = std::make_unique<DbClient>(db_transport(it->second), control_token_, trial_id_);
    db_init_body_ = db_init_body(task_.initial_state);
    if (auto st = db_->init(db_init_body_); !st)
      return classify_running(st.error().with_context("initialising the trial's json-db namespace"), InfraKind::kSandbox);
  } else if (!task_.initial_state.tables.empty() && !python_server()) {
    return Fault::setup("the task has json_db fixtures but its stack has no json-db service");
  }
  auto owner = stack::workspace_owner(*up_);
  auto files = copy_initial_files(docker_, runner_, workspace(), task_, {owner.uid, owner.gid});
  if (!files) return classify_running(files.error(), InfraKind::kDaemon);
  r_.initial_files = std::move(*files);
  if (task_.harbor)
    if (auto f = setup_harbor()) return f;
  if (auto it = up_->containers.find("mock-web"); it != up_->containers.end())
    if (auto st = copy_mock_web(docker_, it->second, task_); !st)
      return classify_running(st.error(), InfraKind::kDaemon);
  if (task_.harbor && task_.harbor->environment.healthcheck) return harbor_healthcheck(*task_.harbor->environment.healthcheck);
  return std::nullopt;
}

// A Harbor task's env tables resolved, the agent's identity read from the runner, /logs made its.
Step TrialRun::setup_harbor() {
  auto resolved = resolve_harbor_env(*task_.harbor, env_.run->env_passthrough, env_.host.env);
  if (!resolved) return Fault::setup(resolved.error().what());
  harbor_env_ = std::move(*resolved);
  auto ids = runner_ids(docker_, runner_);
  if (!ids) return classify_running(ids.error(), InfraKind::kSandbox);
  agent_ids_ = *ids;
  if (auto st = put_harbor_logs(docker_, runner_, ids->uid, ids->gid); !st)
    return classify_running(st.error(), InfraKind::kDaemon);
  return std::nullopt;
}

// [environment.healthcheck] (or a step's), before the agent: an environment that never becomes
// healthy is the task's (an infra error of the sandbox, retried in a fresh one), never the
// model's score. `who` prefixes the message ("step 'two': [steps.healthcheck]").
Step TrialRun::harbor_healthcheck(const manifest::HealthcheckConfig& hc, const std::string& who) {
  progress("healthcheck");
  auto h = wait_harbor_healthy(docker_, runner_, hc, env_.interrupted);
  if (h) return std::nullopt;
  return harbor_env_fault(who.empty() ? h.error() : h.error().with_context(who));
}

// A Harbor environment that is not ready for the agent (healthcheck, a step's setup.sh): the
// sandbox's infra error (kUnavailable), an interruption, or what the daemon's failure says.
Step TrialRun::harbor_env_fault(const Error& e) {
  if (e.code == Errc::kCancelled) return Fault::interruption();
  if (e.code == Errc::kUnavailable) return Fault::infra(InfraKind::kSandbox, e.what());
  return classify_running(e, InfraKind::kSandbox);
}

}  // namespace forge::trial
