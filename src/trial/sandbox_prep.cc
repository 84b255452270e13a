// Bringing up a trial's sandbox.
#include "trial/sandbox_prep.h"

#include "core/service_token.h"
#include "trial/harbor_trial.h"

namespace forge::trial {

std::chrono::seconds trial_lease(const TrialEnv& env) {
  if (!env.run) return std::chrono::hours(12);
  return std::chrono::duration_cast<std::chrono::seconds>(env.run->episode_timeout) + std::chrono::hours(1);
}

Result<PreparedSandbox> bring_up(const manifest::TaskConfig& task, const TrialEnv& env, std::string control_token,
                                 std::function<void(const stack::StackLabels&, const policy::StackPlan&)> on_planned) {
  stack::UpOptions o;
  o.on_planned = std::move(on_planned);
  o.host = env.host;
  o.engine_info = env.engine_info;
  o.build_slots = env.admission ? &env.admission->build : nullptr;
  o.mode = stack::OwnerMode::kAttached;
  o.run_id = env.run_id;
  o.interrupted = env.interrupted;
  o.lease = trial_lease(env);
  o.omit_unused_network = true;
  o.service_env = service_token_env(control_token);
  if (env.run) o.runtime = env.run->runtime;
  // A Harbor task's [environment].env, its templates resolved for the names the run passes.
  std::optional<manifest::LoadedEnvironment> with_env;
  if (task.harbor && !task.harbor->environment.env.empty()) {
    auto resolved =
        resolve_harbor_env(*task.harbor, env.run ? env.run->env_passthrough : std::vector<std::string>{}, env.host.env);
    if (!resolved) return resolved.fail();
    with_env = task.environment;
    auto& runner_env = with_env->manifest.runner.env;
    runner_env.insert(runner_env.end(), resolved->environment.begin(), resolved->environment.end());
  }
  auto u = stack::up_stack(*env.docker, with_env ? *with_env : task.environment, o);
  if (!u) return u.fail();
  PreparedSandbox p;
  p.up = std::move(*u);
  p.control_token = std::move(control_token);
  p.ready_at = Clock::now();
  return p;
}

}  // namespace forge::trial
