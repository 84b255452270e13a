// The agent phase: the agent and its user made, one episode run with the sandbox watched.
#include "trial/trial_run.h"

#include "manifest/harbor/harbor_load.h"

namespace forge::trial {

using results::InfraKind;

Step TrialRun::agent() {
  progress("agent");
  PhaseTimer t(r_, "agent");
  // Harbor's oracle: solution/ enters the runner now, and only for the oracle.
  if (task_.harbor && choice_.kind == AgentChoice::Kind::kOracle && !local_) {
    auto st = step_ ? put_harbor_step_solution(docker_, runner_, *task_.harbor, *step_, agent_ids_.uid,
                                               agent_ids_.gid, harbor_env_.solution,
                                               solution_owner_ ? &*solution_owner_ : nullptr)
                    : put_harbor_solution(docker_, runner_, *task_.harbor, agent_ids_.uid, agent_ids_.gid,
                                          harbor_env_.solution);
    if (!st) return classify_running(st.error(), InfraKind::kDaemon);
    solution_owner_ = agent_ids_;
  }
  // Before the agent is taken: a discarded early turn's agent may still be in its call.
  agent::EarlyTurn* early = join_early_turn();
  auto agent = take_agent();
  if (!agent) return Fault::setup(agent.error().what());
  auto user = make_user();
  if (!user) return Fault::setup(user.error().what());
  watch_ = std::make_unique<SandboxWatch>(docker_, *up_, env_.log);
  watch_->start(started_unix_);
  auto spec = episode_spec();
  spec.early = early;
  r_.episode = agent::run_episode(**agent, user->get(), *tools_.executor, spec, env_.interrupted);
  early_.reset();
  watch_->stop();
  if (shots_) {
    r_.screenshots = shots_->kept();
    r_.screenshots_dropped = shots_->dropped();
  }
  note("INFO", "trial", std::string("episode ended: ") + agent::termination_name(r_.episode.termination),
       {{"turns", std::to_string(r_.episode.turns)}});
  if (!r_.episode.error.empty()) r_.error = r_.episode.error;
  return std::nullopt;
}

// The agent the early turn was asked of, else a new one (also after a discarded early turn,
// whose call may still be running on the old).
Result<std::shared_ptr<agent::Agent>> TrialRun::take_agent() {
  if (agent_ && early_) return agent_;
  auto made = make_agent();
  if (!made) return made.fail();
  return std::shared_ptr<agent::Agent>(std::move(*made));
}

Result<std::unique_ptr<agent::Agent>> TrialRun::make_agent() {
  switch (choice_.kind) {
    case AgentChoice::Kind::kOracle: return agent::oracle_agent(task_);
    case AgentChoice::Kind::kReplay: return agent::replay_agent(choice_.replay_path);
    case AgentChoice::Kind::kNoop: return agent::noop_agent();
    case AgentChoice::Kind::kCanary: return agent::canary_agent(choice_.canary, task_);
    case AgentChoice::Kind::kLlm: {
      auto client = env_.models(choice_.model_key);
      if (!client) return client.fail();
      return agent::llm_agent(*client);
    }
  }
  return fail(Errc::kInvalid, "unknown agent");
}

Result<std::unique_ptr<agent::UserSimulator>> TrialRun::make_user() {
  if (task_.user_simulator.mode == manifest::UserSimulatorConfig::Mode::kScripted)
    return agent::scripted_user(task_.user_simulator, tools_.executor.get());
  if (choice_.kind != AgentChoice::Kind::kLlm && !env_.run->models.count("user"))
    return std::unique_ptr<agent::UserSimulator>();
  auto client = env_.models("user");
  if (!client) return client.fail_with("the task's LLM user");
  return agent::llm_user(*client, task_.user_simulator, tools_.executor.get());
}

// One image a tool returned, into the trial's directory now (a trial that ends midway keeps what
// it took); the path its record names, or "" when there is no directory or it was dropped.
std::string TrialRun::keep_screenshot(const ImagePart& image) {
  if (env_.record_dir.empty()) return "";
  if (!shots_) shots_ = std::make_unique<results::ScreenshotStore>(env_.record_dir);
  auto kept = shots_->keep(image.media_type, image.base64);
  if (kept) return *kept;
  note("WARNING", "tools", kept.error().message);
  return "";
}

agent::EpisodeSpec task_episode_spec(const manifest::TaskConfig& task, const TrialEnv& env) {
  agent::EpisodeSpec spec;
  spec.system_prompt = task.system_prompt;
  spec.initial_user_message = task.initial_user_message;
  spec.max_turns = task.max_turns.value_or(env.run->max_turns);
  spec.episode_timeout = env.run->episode_timeout;
  // A Harbor task's [agent] timeout_sec is its agent's time, as Harbor gives it.
  if (task.harbor && task.harbor->agent.timeout_sec)
    spec.episode_timeout = Millis(static_cast<long long>(*task.harbor->agent.timeout_sec * 1000));
  spec.turn_timeout = env.run->turn_timeout;
  spec.stuck = env.run->stuck;
  spec.exec_slots = slot(env.admission, &Admission::exec);
  return spec;
}

agent::EpisodeSpec TrialRun::episode_spec() {
  agent::EpisodeSpec spec = task_episode_spec(task_, env_);
  // The loader could not know the image's WORKDIR: name the directory the stack really gave.
  if (task_.harbor && up_) spec.system_prompt = manifest::harbor_system_prompt(workspace());
  if (step_) {
    spec.initial_user_message = step_->instruction;
    const auto& timeout = step_->agent.timeout_sec;  // the step's own, else the run's
    spec.episode_timeout = timeout ? Millis(static_cast<long long>(*timeout * 1000)) : env_.run->episode_timeout;
    spec.call_id_prefix = "s" + std::to_string(step_index_ + 1) + "-";  // unique across the steps
  }
  spec.keep_image = [this](const ImagePart& image) { return keep_screenshot(image); };
  return spec;
}

}  // namespace forge::trial
