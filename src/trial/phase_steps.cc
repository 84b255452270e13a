// A multi-step Harbor task: each step's agent, then its verifier, and the trial's score over them.
#include "trial/trial_run.h"

#include "trial/harbor_steps.h"
#include "policy/topology.h"
#include "trial/phase_network.h"

namespace forge::trial {

using results::InfraKind;

namespace {

// Whether a step's rewards fall short of its min_reward (the "reward" key) or min_rewards (each
// named key): Harbor's gate for the remaining steps. A missing key counts as -infinity.
std::optional<std::string> short_of(const manifest::StepConfig& st, const grading::Grade& g) {
  auto value = [&](const std::string& key) -> std::optional<double> {
    for (const std::string& k : {"reward." + key, key == "reward" ? std::string("reward") : std::string()})
      if (auto it = g.components.find(k); !k.empty() && it != g.components.end()) return it->second;
    return std::nullopt;
  };
  std::vector<std::pair<std::string, double>> gates(st.min_rewards.begin(), st.min_rewards.end());
  if (st.min_reward) gates.insert(gates.begin(), {"reward", *st.min_reward});
  for (const auto& [key, min] : gates) {
    auto got = value(key);
    if (!got || *got < min)
      return "'" + key + "' = " + (got ? std::to_string(*got) : std::string("missing")) + " is below min_reward " +
             std::to_string(min);
  }
  return std::nullopt;
}

// Appends a step's episode to the trial's: one transcript, the costs and counts summed, the
// termination the last step's.
void append_episode(agent::Episode& all, agent::Episode&& ep) {
  for (auto& m : ep.messages) all.messages.push_back(std::move(m));
  all.termination = ep.termination;
  if (!ep.error.empty()) all.error = ep.error;
  all.stops_run = all.stops_run || ep.stops_run;
  all.agent_usage += ep.agent_usage;
  all.user_usage += ep.user_usage;
  all.agent_cost_usd += ep.agent_cost_usd;
  all.user_cost_usd += ep.user_cost_usd;
  all.cost_known = all.cost_known && ep.cost_known;
  all.agent_calls += ep.agent_calls;
  all.user_calls += ep.user_calls;
  all.turns += ep.turns;
  all.elapsed += ep.elapsed;
}

}  // namespace

// A multi-step task (docs/harbor.md "Multi-step tasks"): each [[steps]] entry in order in the
// same runner — the agent with the step's instruction (the oracle with the step's solution),
// its processes killed, the step's verifier — and the trial's score by the task's
// multi_step_reward_strategy over the steps verified. A step short of its min_reward ends the
// steps; those not run count for neither strategy (Harbor's rule).
Step TrialRun::run_steps() {
  const auto& h = *task_.harbor;
  agent::Episode all;
  grading::Grade total;
  // Each step's reward map, in order (a step scored 0 without a verification: an empty map), so
  // the last step's score and map are the last entries.
  std::vector<std::map<std::string, double>> rewards;
  for (std::size_t i = 0; i < h.steps.size(); ++i) {
    step_ = &h.steps[i];
    step_index_ = i;
    bool changed = false;
    if (auto f = use_step_user(changed)) {
      if (!agent_may_have_caused(*f)) return f;
      score_rest_zero(*f, total, rewards);
      break;
    }
    if (i > 0 || changed) {
      {
        std::lock_guard lock(log_mu_);
        grading_ = false;
      }
      if (auto f = open_tools()) return f;
    }
    note("INFO", "trial", "step " + step_->name + " (" + std::to_string(i + 1) + "/" + std::to_string(h.steps.size()) + ")");
    if (auto f = prepare_step()) {
      if (!agent_may_have_caused(*f)) return f;
      score_rest_zero(*f, total, rewards);
      break;
    }
    Step f = agent();
    // The agent's helper dies with its processes: the channel closes first, a new one opens per step.
    tools_ = {};
    append_episode(all, std::move(r_.episode));
    r_.episode = all;
    if (!f) f = after_agent();
    if (f) return f;
    grading::Grade step_grade;
    if (auto g = grade_step(total, rewards, step_grade)) return g;
    if (auto shortfall = short_of(*step_, step_grade); shortfall && i + 1 < h.steps.size()) {
      // The steps not run count as verified with no reward (0 for every key; "final": 0). Harbor
      // leaves them out, which lets an agent that does step one and misses the gate on purpose
      // score as if it had done every step.
      total.reasons.push_back("step " + step_->name + ": " + *shortfall + ": the remaining " +
                              std::to_string(h.steps.size() - i - 1) + " step(s) were not run and score 0");
      zero_steps_from(i + 1, total, rewards);
      break;
    }
  }
  score_steps(total, rewards);
  return std::nullopt;
}

// The step's verifier (its grade slot held, timed as "grade") and its artifacts; its score and
// reward map recorded into the trial's, its grade into `step_grade`.
Step TrialRun::grade_step(grading::Grade& total, std::vector<std::map<std::string, double>>& rewards,
                          grading::Grade& step_grade) {
  Slots::Hold hold(slot(env_.admission, &Admission::grade));
  progress("grade");
  HarborVerdict v;
  {
    PhaseTimer t(r_, "grade");
    {
      std::lock_guard lock(log_mu_);
      grading_ = true;
    }
    if (auto g = verify_harbor(v)) return g;
    if (auto g = step_artifacts()) return g;
  }
  const double score = v.grade.score;
  total.components["step." + step_->name] = score;
  std::string why;
  for (const auto& r : v.grade.reasons) why += (why.empty() ? "" : "; ") + r;
  total.reasons.push_back("step " + step_->name + ": " + why);
  r_.verifier_exit_code = v.run.exit_code;
  r_.verifier_output += "== step " + step_->name + " (exit code " + std::to_string(v.run.exit_code) + ")\n" +
                        v.run.output + "\n";
  rewards.push_back(std::move(v.rewards));
  step_grade = std::move(v.grade);
  return std::nullopt;
}

// The trial's grade over the steps: the reward map by the task's multi_step_reward_strategy, and the score.
void TrialRun::score_steps(grading::Grade& total, const std::vector<std::map<std::string, double>>& rewards) {
  const auto& h = *task_.harbor;
  // The trial's reward map: each key's mean over the verified steps (Harbor's "mean"), or the
  // last one's; the score is taken from it as from a single step's.
  const bool mean = h.reward_strategy == manifest::RewardStrategy::kMean;
  const std::size_t verified = rewards.size();
  const auto map = mean ? mean_step_rewards(rewards) : rewards.empty() ? std::map<std::string, double>{} : rewards.back();
  const double last = total.components["step." + h.steps.back().name];  // set for every step by now
  for (const auto& [k, val] : map) total.components[k == "reward" ? k : "reward." + k] = val;
  if (!mean) {
    total.score = last;
    total.reasons.push_back("final of " + std::to_string(verified) + " step(s): " + std::to_string(total.score));
  } else if (map.empty()) {
    total.score = 0;
    total.reasons.push_back("mean of " + std::to_string(verified) + " step(s): no step wrote a reward: reward 0");
  } else if (auto score = harbor_score(map); !score) {
    total.score = 0;
    total.reasons.push_back("mean of " + std::to_string(verified) + " step(s): " + score.error().what() + ": reward 0");
  } else {
    total.score = *score;
    total.reasons.push_back("mean of " + std::to_string(verified) + " step(s), each reward key averaged: " +
                            std::to_string(total.score));
  }
  total.binary_pass = total.score >= 1.0;
  r_.grade = std::move(total);
  note("INFO", "grading", r_.grade.binary_pass ? "graded: pass" : "graded: fail",
       {{"score", std::to_string(r_.grade.score)}});
}

// A step whose [steps.agent].user differs from [agent]'s runs its agent as that user in the same
// runner: its tool channel, its setup.sh, its /logs/agent and /logs/artifacts, the oracle's
// /solution. `changed`: the user is not the previous step's (the channel must reopen).
Step TrialRun::use_step_user(bool& changed) {
  const auto& h = *task_.harbor;
  const std::string& u = step_->agent.user;
  const std::string want = u == h.agent.user ? "" : u == "root" ? "0:0" : u;
  changed = want != step_user_;
  if (!changed) return std::nullopt;
  tools_ = {};
  const std::string who = "step '" + step_->name + "': [steps.agent].user = \"" + (want.empty() ? h.agent.user : u) + "\"";
  auto ids = runner_ids(docker_, runner_, want);
  if (!ids) return classify_running(ids.error().with_context(who), InfraKind::kSandbox);
  if (auto st = put_harbor_logs(docker_, runner_, ids->uid, ids->gid); !st)
    return classify_running(st.error().with_context(who), InfraKind::kDaemon);
  agent_ids_ = *ids;
  step_user_ = want;
  return std::nullopt;
}

// Before a step's agent (and before the oracle gets its /solution): the step's workdir/ into the
// workspace, its setup.sh run there as the agent, then its [steps.healthcheck] — the task's ran
// once, before the first step. None of it is in the sandbox before its step.
Step TrialRun::prepare_step() {
  progress("setup");
  const auto& h = *task_.harbor;
  if (auto f = enter_step_network()) return f;
  if (auto st = put_harbor_step_workdir(docker_, runner_, h, *step_, workspace(), agent_ids_.uid, agent_ids_.gid); !st)
    return st.error().code == Errc::kInvalid ? Fault::setup(st.error().what())
                                             : classify_running(st.error(), InfraKind::kDaemon);
  if (auto st = run_harbor_step_setup(docker_, runner_, h, *step_, workspace(), agent_ids_.uid, agent_ids_.gid,
                                      env_.interrupted);
      !st)
    return harbor_env_fault(st.error());
  if (step_->healthcheck) return harbor_healthcheck(*step_->healthcheck, "step '" + step_->name + "': [steps.healthcheck]");
  return std::nullopt;
}

// A step whose agent network is not the runner's now: the runner moves before anything of the
// step runs (its workdir, setup.sh, healthcheck, agent), verified (docs/harbor.md "Steps").
Step TrialRun::enter_step_network() {
  const auto& policies = task_.environment.manifest.step_network_policies;
  if (!up_->plan.runner_moves || local_ || step_index_ >= policies.size()) return std::nullopt;
  const auto policy = policies[step_index_];
  const std::string who = "step '" + step_->name + "'";
  PhaseNet to{policy, 0};
  if (const auto& lists = task_.environment.manifest.step_allowlists;
      policy == manifest::NetworkPolicy::kLimitedInternet && step_index_ < lists.size()) {
    to.allowlist = policy::allowlist_index(up_->plan, lists[step_index_]);
    if (to.allowlist < 0) return Fault::setup(who + ": its allowlist is not one the stack was planned with");
  }
  if (auto st = move_runner(docker_, *up_, runner_, to, who, Millis(20000), proxy_state_); !st)
    return classify_running(st.error(), InfraKind::kSandbox);
  r_.networks["step." + step_->name] = manifest::policy_name(policy);
  return std::nullopt;
}

// Whether a step's setup fault may be the agent's doing: a failed setup.sh or healthcheck of a
// step after the first (the sandbox's infra error), not an interruption or the daemon's failure.
bool TrialRun::agent_may_have_caused(const Fault& f) const {
  return step_index_ > 0 && !f.interrupted && f.outcome == results::Outcome::kInfraError &&
         f.kind == InfraKind::kSandbox;
}

// The agent had this runner for the earlier steps: what it left may be why this step's user,
// setup.sh or healthcheck failed, so the trial is not retried as the environment's fault (an
// agent could dodge its later steps so). This step and the rest count as verified with no
// reward: 0 for every key.
void TrialRun::score_rest_zero(const Fault& f, grading::Grade& total,
                               std::vector<std::map<std::string, double>>& rewards) {
  const auto& steps = task_.harbor->steps;
  total.reasons.push_back("step " + step_->name + ": " + f.message + " — after the agent had the environment for " +
                          std::to_string(step_index_) + " step(s): this step and the " +
                          std::to_string(steps.size() - step_index_ - 1) + " after it score 0");
  zero_steps_from(step_index_, total, rewards);
}

// The steps from `from` on count as verified with no reward: 0 for every key ("final": 0).
void TrialRun::zero_steps_from(std::size_t from, grading::Grade& total,
                               std::vector<std::map<std::string, double>>& rewards) {
  const auto& steps = task_.harbor->steps;
  for (std::size_t j = from; j < steps.size(); ++j) {
    total.components["step." + steps[j].name] = 0;
    rewards.emplace_back();
  }
}

}  // namespace forge::trial
