// One trial's lifecycle as named phases. Each phase returns nullopt to go on or the Fault that
// ends the trial; every error is classified in one place (classify), and teardown follows the
// phases whatever happened.
#include "trial/trial_run.h"

#include <chrono>
#include <ctime>

#include "core/files.h"
#include "trial/egress_use.h"
#include "trial/trial_env.h"

namespace forge::trial {

std::string AgentChoice::label() const {
  switch (kind) {
    case Kind::kOracle: return "oracle";
    case Kind::kReplay: return "replay";
    case Kind::kNoop: return "noop";
    case Kind::kCanary: return "canary:" + std::string(agent::canary_name(canary));
    case Kind::kLlm:
      return "llm:" + model_key;  // the config key: one model at two settings stays two agents
  }
  return "unknown";
}

AgentChoice AgentChoice::canary_of(agent::CanaryStrategy s) {
  AgentChoice c;
  c.kind = Kind::kCanary;
  c.canary = s;
  c.spec = c.label();
  return c;
}

TrialRun::TrialRun(const manifest::TaskConfig& task, int index, int attempt, const AgentChoice& choice, TrialEnv& env)
    : task_(task), choice_(choice), env_(env), docker_(*env.docker) {
  r_.task_id = task.task_id;
  r_.mock_web_url = task.initial_state.mock_web_base_url;
  r_.trial_index = index;
  r_.attempt = attempt;
  r_.agent = choice.label();
  trial_id_ = trial_id_of(task, index);
}

// A trial run at its turn with no sandbox prepared ahead: its first model turn overlaps up and
// setup when that is safe (phase_early_turn.cc). A prepared trial's sandbox is ready already.
TrialResult TrialRun::run(std::unique_ptr<FirstTurn> first) {
  adopt_first_turn(first ? std::move(first) : start_first_turn(task_, r_.trial_index, choice_, env_));
  return finish(begin());
}

// Up → setup → tools: at the trial's turn, or ahead of it (prepare_trial).
Step TrialRun::begin() {
  r_.started_at = iso_now();
  started_unix_ = static_cast<std::int64_t>(std::time(nullptr));
  // A test-script or checks.py grader is started from within up (start_grader_ahead), as soon as
  // the stack's labels are known; a Harbor verifier reads what setup resolves (its env): after.
  Step s = up();
  if (!s) s = setup();
  if (!s) s = open_tools();
  snapshot_lease_ = {};  // a turn not taken by now (a failure) passes to the next trial
  if (!s) prepare_grader_ahead();  // once: a grader started in up is not made again
  return s;
}

// Agent → grade → down, after begin().
TrialResult TrialRun::finish(Step s) {
  if (!s && task_.harbor && !task_.harbor->steps.empty()) {
    s = run_steps();
  } else {
    if (!s) s = agent();
    if (!s) s = after_agent();
    if (!s) s = grade();
  }
  if (s) end_with(*s);
  discard_early_turn("the trial ended before its agent phase");  // a failed sandbox: not this episode's
  down();
  r_.finished_at = iso_now();
  return std::move(r_);
}

void TrialRun::end_with(const Fault& f) {
  std::map<std::string, std::string> why;
  if (f.outcome == results::Outcome::kInfraError && !f.interrupted) why["infra_kind"] = results::to_string(f.kind);
  const bool model = f.outcome == results::Outcome::kGraded;
  note(model ? "INFO" : "ERROR", "trial",
       f.interrupted ? "interrupted"
                     : (model ? std::string("model failure") : std::string(results::to_string(f.outcome))) + ": " +
                           f.message,
       std::move(why));
  if (f.interrupted) {
    r_.interrupted = true;
    r_.error = f.message;
    return;
  }
  if (f.outcome == results::Outcome::kGraded) {  // the model's failure, decided before grading
    r_.grade = grading::Grade{};
    r_.grade.reasons = {f.message};
    r_.error = f.message;
    return;
  }
  r_.outcome = f.outcome;
  r_.infra_kind = f.kind;
  r_.stops_run = f.outcome == results::Outcome::kSetupError;
  r_.error = f.message;
  // Ending before the agent ever spoke: the episode did not end by any rule of its own.
  if (r_.episode.messages.empty()) r_.episode.termination = agent::Termination::kInfraError;
}

// The sweep's live view: the phase entered (or null), and after a tool call the counts so far.
void TrialRun::progress(const char* phase, const tools::CallRecord* call) {
  if (phase) note("INFO", "trial", std::string("phase ") + phase);
  if (phase) mark_phase(phase);
  if (!env_.on_progress) return;
  std::lock_guard lock(progress_mu_);
  if (phase) progress_.phase = phase;
  progress_.tool_error.clear();
  if (call) {
    ++progress_.tool_calls;
    if (call->outcome != tools::ToolOutcome::Kind::kOk) {
      ++progress_.tool_errors;
      progress_.tool_error =
          call->tool + ": " + (call->reason.empty() ? tools::outcome_name(call->outcome) : call->reason);
    }
  }
  env_.on_progress(progress_);
}

// A phase of the egress ledger begins, when `step` begins a new one.
void TrialRun::mark_phase(const char* step) {
  const char* phase = ledger_phase(step);
  std::lock_guard lock(progress_mu_);
  if (!phase || (!phase_marks_.empty() && phase_marks_.back().phase == phase)) return;
  using namespace std::chrono;
  phase_marks_.push_back({duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count(), phase});
}

// One logs.yaml entry; tool calls on other threads add theirs under the same lock.
void TrialRun::note(const char* level, const char* module, std::string message,
                    std::map<std::string, std::string> context) {
  std::lock_guard lock(log_mu_);
  add_event(r_, level, module, std::move(message), std::move(context));
}

TrialResult run_trial(const manifest::TaskConfig& task, int trial_index, int attempt, const AgentChoice& choice,
                      TrialEnv& env, std::unique_ptr<FirstTurn> first) {
  return TrialRun(task, trial_index, attempt, choice, env).run(std::move(first));
}

}  // namespace forge::trial
