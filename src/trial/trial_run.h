// Private to src/trial: TrialRun, one trial's phases as methods, each defined in the phase_*.cc of
// its phase (trial.cc orders them; prepared_trial.cc runs the first ones ahead of the turn).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/early_turn.h"
#include "core/clock.h"
#include "grading/grader.h"
#include "policy/egress_log.h"
#include "results/screenshots.h"
#include "stack/service_swap.h"
#include "stack/up.h"
#include "tools/browser_session.h"
#include "tools/stack_tools.h"
#include "trial/checks_run.h"
#include "trial/db_client.h"
#include "trial/egress_switch.h"
#include "trial/fault.h"
#include "trial/golden_replay.h"
#include "trial/grader_ahead.h"
#include "trial/grading_sources.h"
#include "trial/harbor_trial.h"
#include "trial/local_trial.h"
#include "trial/sandbox_prep.h"
#include "trial/sandbox_watch.h"
#include "trial/trial.h"
#include "trial/verifier_network.h"

namespace forge::trial {

// A phase's end: nullopt to go on, or the Fault that ends the trial.
using Step = std::optional<Fault>;

// Times one phase into the result.
class PhaseTimer {
 public:
  PhaseTimer(TrialResult& r, const char* name) : r_(r), name_(name), start_(Clock::now()) {}
  ~PhaseTimer() { r_.phases[name_] = elapsed_since(start_); }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  TrialResult& r_;
  const char* name_;
  Clock::time_point start_;
};

inline Slots* slot(Admission* a, Slots Admission::*which) { return a ? &(a->*which) : nullptr; }

// "{task_id}_{trial_index}": the trial's name in its services (json-db, rag).
inline std::string trial_id_of(const manifest::TaskConfig& task, int index) {
  return task.task_id + "_" + std::to_string(index);
}

// phase_agent.cc: the episode's settings from the task and the run alone (no step, no stack),
// which is all a first turn asked ahead of the sandbox may depend on.
agent::EpisodeSpec task_episode_spec(const manifest::TaskConfig& task, const TrialEnv& env);

class TrialRun {
 public:
  TrialRun(const manifest::TaskConfig& task, int index, int attempt, const AgentChoice& choice, TrialEnv& env);

  // trial.cc: the phases in order.
  TrialResult run(std::unique_ptr<FirstTurn> first);
  // phase_early_turn.cc: the first turn, asked ahead of the sandbox, becomes this trial's.
  void adopt_first_turn(std::unique_ptr<FirstTurn> first);
  Step begin();
  TrialResult finish(Step s);

  // prepared_trial.cc: a trial's first phases run ahead of its turn.
  Step start_helper();
  bool freeze();
  bool frozen() const { return !frozen_.empty(); }
  Step thaw();
  void claim(int attempt);
  void abandon();

 private:
  // phase_up.cc
  Step up();
  void adopt(PreparedSandbox&& p);

  // phase_setup.cc
  Step setup();
  Step setup_harbor();
  Step run_setup_script();     // environment.setup_script, under the setup phase's network
  Step enter_agent_network();  // the runner onto the agent phase's networks, verified
  void record_networks();      // the trial's networks by phase (trials.jsonl "networks")
  Step harbor_healthcheck(const manifest::HealthcheckConfig& hc, const std::string& who = "");
  Step harbor_env_fault(const Error& e);
  Step setup_services();
  Result<AgentIds> workspace_owner();  // the runner's user as uid:gid, asked of the runner when a name
  Result<AgentIds> runner_user_ids();  // what `id` says in the runner, once  // mock-web's pages and rag's index, forked or not
  // snapshot.h: set up once, fork many.
  bool forks() const;
  std::string snapshot_content_key();  // --keep-snapshots: what setup reads, hashed; "" when not kept
  Step fork_setup(const ForkState& f);
  Step fork_services(std::vector<stack::ServiceSwap> services);
  // Right after setup (a Python server's task: once its server is seeded): `server_state` its state.
  void take_setup_snapshot(const std::string& server_state = "");

  // phase_tools.cc
  Step open_tools();
  void record_tool_call(const tools::CallRecord& rec);
  DbTransport db_transport(const std::string& json_db);
  tools::DbRoute db_route() const;
  bool python_server() const;
  Step seed_server();

  // phase_early_turn.cc: the first turn overlapping up and setup.
  agent::EarlyTurn* join_early_turn();
  void discard_early_turn(const std::string& why);

  // phase_agent.cc
  Step agent();
  Result<std::shared_ptr<agent::Agent>> take_agent();
  Result<std::unique_ptr<agent::Agent>> make_agent();
  Result<std::unique_ptr<agent::UserSimulator>> make_user();
  agent::EpisodeSpec episode_spec();
  std::string keep_screenshot(const ImagePart& image);

  // phase_after_agent.cc
  Step after_agent();
  Step sandbox_verdict();
  bool agent_started_nothing() const;
  bool agent_ran_programs() const;

  // phase_grade.cc
  Step grade();
  Step read_final_state();
  Step read_server_state();
  grading::Evidence evidence();
  ChecksInputs checks_inputs() const;
  Result<grading::JudgeReply> judge(const std::string& model_ref, const std::string& system, const std::string& user);
  GraderSpec grader_spec() const;
  void prepare_grader_ahead();
  void start_grader_ahead(const stack::StackLabels& labels, const std::string& image, const std::string& workspace);
  std::optional<AheadGrader> take_grader_ahead();
  void discard_grader_ahead();

  // phase_harbor_verify.cc: the grade of a Harbor task, or of one of its steps.
  Step grade_harbor();
  Step verify_harbor(HarborVerdict& verdict);
  Step harbor_artifacts(HarborVerifierOptions& vo);
  Step harbor_verifier(const GraderSpec& where, HarborVerifierOptions& vo);
  Step keep_logs(std::vector<std::string>& tars, const std::string& prefix);
  Step step_artifacts();
  VerifierNetworkOptions verifier_network_options() const;
  Result<std::optional<VerifierNetwork>> up_grade_network() const;
  void prepare_harbor_ahead();

  // phase_steps.cc: a multi-step Harbor task, in place of agent → after_agent → grade.
  Step run_steps();
  Step grade_step(grading::Grade& total, std::vector<std::map<std::string, double>>& rewards,
                  grading::Grade& step_grade);
  void score_steps(grading::Grade& total, const std::vector<std::map<std::string, double>>& rewards);
  Step use_step_user(bool& changed);
  Step prepare_step();
  Step enter_step_network();  // a Harbor step's own agent network, before the step
  bool agent_may_have_caused(const Fault& f) const;
  void score_rest_zero(const Fault& f, grading::Grade& total, std::vector<std::map<std::string, double>>& rewards);
  void zero_steps_from(std::size_t from, grading::Grade& total, std::vector<std::map<std::string, double>>& rewards);

  // phase_down.cc
  void down();
  void keep_egress_ledger(const std::string& who);
  // phase_grade.cc
  Step read_ledger_for_grading();

  // trial.cc: the outcome, the live view and the log.
  void end_with(const Fault& f);
  void progress(const char* phase, const tools::CallRecord* call = nullptr);
  void mark_phase(const char* step);
  void note(const char* level, const char* module, std::string message,
            std::map<std::string, std::string> context = {});

  bool interrupted() const { return env_.interrupted && env_.interrupted->load() > 0; }
  const std::string& workspace() const { return up_->plan.runner.workdir; }
  std::uint64_t workspace_limit() const;

  const manifest::TaskConfig& task_;
  const AgentChoice& choice_;
  TrialEnv& env_;
  engine::Client& docker_;
  TrialResult r_;
  std::string trial_id_;
  std::optional<stack::UpResult> up_;
  std::string runner_;
  std::string control_token_;  // json-db's; never logged, never given to a tool or the runner
  std::unique_ptr<DbClient> db_;
  std::string db_init_body_;  // what the namespace was initialised with; golden replay starts from it
  GoldenReplayers replayers_;
  std::unique_ptr<grading::StateStore> store_;
  std::string server_initial_state_;  // a Python server's state before the agent ran
  // This trial's turn at its task's snapshot, from setup until its tools are open (a Python
  // server's state is snapshotted once seeded); then released, handing an untaken turn on.
  SnapshotCache::Lease snapshot_lease_;
  std::string fork_server_state_;  // a fork's: the snapshot's Python server state, seeded for the agent
  std::unique_ptr<SandboxWatch> watch_;
  std::int64_t started_unix_ = 0;
  std::vector<std::string> frozen_;  // containers paused until the trial's turn
  tools::StackTools tools_;
  std::shared_ptr<agent::Agent> agent_;         // made ahead for the early turn; null: made in agent()
  std::unique_ptr<agent::EarlyTurn> early_;     // the first turn, asked while up and setup ran
  std::shared_ptr<tools::BrowserSession> browser_;  // the trial's Chromium (browser_use.h); null: none
  std::unique_ptr<LocalTrial> local_;           // the local executor's sandbox; null for a container trial
  AgentIds agent_ids_;                          // a Harbor task's: who owns /logs/agent and /solution
  HarborEnv harbor_env_;                        // a Harbor task's env tables, resolved in setup
  const manifest::StepConfig* step_ = nullptr;  // the step running, in a multi-step task
  std::size_t step_index_ = 0;
  std::string step_user_;                   // the step's agent user when not [agent]'s; "": the runner's
  ProxyState proxy_state_;                  // the egress proxy's config as the phases last switched it
  std::optional<AgentIds> runner_user_ids_;  // the runner's user as numbers, once asked
  std::optional<AgentIds> solution_owner_;  // who owns /solution's content, once the oracle got it
  // The agent's screenshots, written to the trial's directory as taken (TrialEnv::record_dir);
  // made at the first one.
  std::unique_ptr<results::ScreenshotStore> shots_;
  std::mutex log_mu_;
  bool grading_ = false;
  std::mutex progress_mu_;
  TrialProgress progress_;
  std::vector<policy::PhaseMark> phase_marks_;  // when setup, agent and grade began (the egress ledger's phases)
  // The trial's grader (test scripts, checks.py or a Harbor verifier), being made ahead since the
  // tools opened; taken by the grade phase, else removed by down().
  GraderAhead grader_ahead_;
};

}  // namespace forge::trial
