// The setup phase: the initial state into the sandbox, and a Harbor task's environment made ready.
#include "trial/trial_run.h"

#include <filesystem>

#include "core/confined_dir.h"
#include "stack/workspace.h"
#include "trial/harbor_steps.h"
#include "trial/phase_network.h"
#include "trial/harbor_health.h"
#include "trial/rag_use.h"
#include "trial/trial_setup.h"

namespace forge::trial {

using results::InfraKind;
namespace fs = std::filesystem;

namespace {
constexpr std::size_t kMaxSetupScriptBytes = std::size_t{4} << 20;
constexpr Millis kSetupScriptTimeout{600000};
constexpr Millis kMoveTimeout{20000};  // the route check's exec
}  // namespace

// Initial state: fixtures into json-db (by forgectl, with the control token: the agent cannot
// init, reset or restore a namespace), files into the workspace, the task's pages into mock-web, its
// knowledge base into rag (indexed per trial, with rag's control token).
Step TrialRun::setup() {
  progress("setup");
  PhaseTimer t(r_, "setup");
  if (local_) return local_->setup(r_);
  if (forks()) {
    snapshot_lease_ = env_.snapshots->acquire(docker_, task_.path + "\n" + up_->plan.runner.image,  // per engine: see acquire
                                              snapshot_content_key());
    if (const auto* f = snapshot_lease_.fork()) return fork_setup(*f);
  }
  if (auto it = up_->containers.find("json-db"); it != up_->containers.end()) {
    db_ = std::make_unique<DbClient>(db_transport(it->second), control_token_, trial_id_);
    db_init_body_ = db_init_body(task_.initial_state);
    if (auto st = db_->init(db_init_body_); !st)
      return classify_running(st.error().with_context("initialising the trial's json-db namespace"), InfraKind::kSandbox);
  } else if (!task_.initial_state.tables.empty() && !python_server()) {
    return Fault::setup("the task has json_db fixtures but its stack has no json-db service");
  }
  auto owner = workspace_owner();
  if (!owner) return classify_running(owner.error(), InfraKind::kSandbox);
  auto files = copy_initial_files(docker_, runner_, workspace(), task_, {owner->uid, owner->gid});
  if (!files) return classify_running(files.error(), InfraKind::kDaemon);
  r_.initial_files = std::move(*files);
  if (task_.harbor)
    if (auto f = setup_harbor()) return f;
  if (auto f = setup_services()) return f;
  if (auto f = run_setup_script()) return f;
  // A Python server's state is had once it is seeded (seed_server), its snapshot taken then.
  if (snapshot_lease_.taking() && !python_server()) take_setup_snapshot();
  if (auto f = enter_agent_network()) return f;
  if (task_.harbor && task_.harbor->environment.healthcheck) return harbor_healthcheck(*task_.harbor->environment.healthcheck);
  return std::nullopt;
}

// Who the workspace's files and the setup script belong to: the runner's user, as numbers. A name,
// or no user (the image's own), is asked of the running runner (runner_user_ids): never root by
// default, which would leave the agent files it cannot change.
Result<AgentIds> TrialRun::workspace_owner() {
  if (auto known = stack::workspace_owner(*up_)) return AgentIds{known->uid, known->gid};
  auto ids = runner_user_ids();
  if (!ids) return ids.fail_with("finding the uid that owns the workspace");
  return ids;
}

// The uid and gid the runner's processes run as (`id` in it, as its own user), asked once.
Result<AgentIds> TrialRun::runner_user_ids() {
  if (runner_user_ids_) return *runner_user_ids_;
  auto ids = runner_ids(docker_, runner_);
  if (!ids) return ids.fail();
  return *(runner_user_ids_ = *ids);
}

Step TrialRun::setup_services() {
  if (auto it = up_->containers.find("mock-web"); it != up_->containers.end())
    if (auto st = copy_mock_web(docker_, it->second, task_); !st)
      return classify_running(st.error(), InfraKind::kDaemon);
  if (auto st = load_rag_index(docker_, env_.engine_is_local, *up_, control_token_, trial_id_, task_); !st)
    return classify_running(st.error(), InfraKind::kSandbox);
  return std::nullopt;
}

// environment.setup_script, as the agent's user in the workspace, with the setup phase's network:
// a failure is the task's environment (an infra error of the sandbox), never the model's.
Step TrialRun::run_setup_script() {
  const auto& m = task_.environment.manifest;
  if (m.setup_script.empty()) return std::nullopt;
  const fs::path dir = fs::path(m.path).parent_path();
  const std::string rel = fs::path(m.setup_script).lexically_relative(dir).generic_string();
  const std::string what = "setup_script '" + rel + "'";
  auto d = ConfinedDir::open(dir.string());
  auto script = d ? d->read(rel, kMaxSetupScriptBytes) : Result<std::string>(d.fail());
  if (!script) return Fault::setup(script.error().with_context(what).what());
  auto owner = workspace_owner();
  if (!owner) return classify_running(owner.error(), InfraKind::kSandbox);
  auto st = trial::run_setup_script(docker_, runner_, std::move(*script), what, "before the agent", workspace(),
                                    owner->uid, owner->gid, env_.interrupted, kSetupScriptTimeout, up_->plan.setup_env);
  if (!st) return harbor_env_fault(st.error());
  return std::nullopt;
}

// Setup's network was not the agent's: the runner moves, and the agent starts only once the move
// is verified (docs/environment.md "Per-phase policy").
Step TrialRun::enter_agent_network() {
  if (!up_->plan.runner_moves) return std::nullopt;
  const auto policy = task_.environment.manifest.network_policy;
  if (auto st = move_runner(docker_, *up_, runner_, {policy, 0}, "the agent phase", kMoveTimeout, proxy_state_); !st)
    return classify_running(st.error(), InfraKind::kSandbox);
  r_.networks["agent"] = manifest::policy_name(task_.environment.manifest.network_policy);
  note("INFO", "trial", std::string("runner moved to the agent phase's network: ") + r_.networks["agent"]);
  return std::nullopt;
}

// A Harbor task's env tables resolved, the agent's identity read from the runner, /logs made its.
Step TrialRun::setup_harbor() {
  auto resolved = resolve_harbor_env(*task_.harbor, env_.run->env_passthrough, env_.host.env);
  if (!resolved) return Fault::setup(resolved.error().what());
  harbor_env_ = std::move(*resolved);
  auto ids = runner_user_ids();
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
