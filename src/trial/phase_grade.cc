// The grade phase: the final state read, then the task graded on the host.
#include "trial/trial_run.h"

#include "engine/containers.h"
#include "policy/hardening.h"
#include "tools/python_server.h"
#include "trial/egress_use.h"
#include "trial/grader_setup.h"
#include "trial/python_state.h"
#include "trial/trial_env.h"

namespace forge::trial {

using results::InfraKind;

// The final state, then the grade, on the host.
Step TrialRun::grade() {
  Slots::Hold hold(slot(env_.admission, &Admission::grade));
  progress("grade");
  PhaseTimer t(r_, "grade");
  {
    std::lock_guard lock(log_mu_);
    grading_ = true;
  }
  if (auto f = read_final_state()) return f;
  if (task_.harbor) return grade_harbor();
  if (auto f = read_ledger_for_grading()) return f;
  grading::Evidence ev = evidence();
  auto g = grading::grade(task_.grading, ev);
  if (!g) return classify_running(g.error().with_context("grading"), InfraKind::kGrader);
  r_.grade = std::move(*g);
  r_.judge_cost_usd = r_.grade.judge_cost_usd;
  note("INFO", "grading", r_.grade.binary_pass ? "graded: pass" : "graded: fail",
       {{"score", std::to_string(r_.grade.score)}});
  return std::nullopt;
}

// The egress ledger so far, for the `egress` rules; read again whole at down (regate_egress).
Step TrialRun::read_ledger_for_grading() {
  if (!task_.grading.egress.present || !up_) return std::nullopt;
  auto ledger = read_egress_ledger(docker_, *up_, phase_marks_);
  if (!ledger) return classify_running(ledger.error().with_context("grading's egress rules"), InfraKind::kDaemon);
  r_.egress = std::move(*ledger);
  return std::nullopt;
}

// The final state, read before grading: json-db's namespace, or the Python server's state.
Step TrialRun::read_final_state() {
  if (db_) {
    // From the host with the control token; golden replay in a namespace of its own (golden_replay.h).
    auto state = db_->state_json();
    if (!state) return classify_running(state.error().with_context("reading the final state"), InfraKind::kSandbox);
    r_.final_state_json = "{\"db\":" + *state + "}";
    store_ = std::make_unique<DbStateStore>(*db_, db_init_body_, replayers_);
  }
  if (python_server()) return read_server_state();
  return std::nullopt;
}

Step TrialRun::read_server_state() {
  // From the agent's server, before grading: the agent phase is over, nothing calls its tools.
  auto state = tools::server_state(*tools_.mcp, Deadline::in(Millis(30000)));
  if (!state && agent_ran_programs()) {
    // Never a retried, uncounted trial of the agent's making (docs/errors.md).
    r_.episode.termination = agent::Termination::kSandboxDestroyed;
    return Fault::model(
        "the task's Python server stopped answering after the agent ran programs beside it in the "
        "runner (its memory, its processes): graded 0 — " +
        state.error().what());
  }
  if (!state) return classify_running(state.error().with_context("reading the final state"), InfraKind::kSandbox);
  r_.final_state_json = "{\"db\":" + *state + "}";
  PythonServerGolden g;
  g.docker = &docker_;
  g.server = *task_.environment.tools.mcp_server;
  g.labels = up_->labels;
  g.initial_state = server_initial_state_;
  g.unstable_fields = task_.initial_state.unstable_fields;
  g.cache = env_.golden_cache.get();
  g.task_id = task_.task_id;
  g.task_initial_state = task_.initial_state.json_db_json;
  g.hash = &task_.grading.state_checks.hash;
  g.use = &r_.golden;
  store_ = std::make_unique<PythonStateStore>(std::move(*state), std::move(g));
  return std::nullopt;
}

grading::Evidence TrialRun::evidence() {
  grading::Evidence ev;
  ev.messages = r_.episode.messages;
  for (const auto& e : r_.tool_log)
    ev.tool_calls.push_back(
        {e.requestor, e.record.tool, e.record.arguments, e.record.outcome == tools::ToolOutcome::Kind::kOk});
  ev.final_state_json = r_.final_state_json;
  ev.state = store_.get();
  ev.egress = r_.egress;  // the ledger as collected before grading (the egress rules' evidence)
  WorkspaceLimits caps;
  caps.declared_bytes = workspace_limit();
  auto files = std::make_shared<WorkspaceFiles>(docker_, runner_, workspace(), path_globs(task_.grading), caps);
  ev.files = [files](const std::string& glob) { return files->match(glob); };
  ev.judge = [this](const std::string& model_ref, const std::string& system, const std::string& user) {
    return judge(model_ref, system, user);
  };
  ev.run_tests = [this]() -> Result<grading::TestRun> {
    auto ahead = take_grader_ahead();
    GraderSpec spec = grader_spec();
    std::optional<VerifierNetwork> net = ahead ? std::move(ahead->network) : std::nullopt;
    if (!ahead || !ahead->network) {
      auto up = up_grade_network();
      if (!up) return up.fail_with("running the task's tests");
      net = std::move(*up);
    }
    if (net) spec.network = &*net;
    // down removes the stack's containers by its labels; a grader on a network of its own goes
    // first, so that its network can go right after it.
    spec.leave_to_teardown = !local_ && !net;
    auto run = run_grader(docker_, spec, task_, ahead ? ahead->id : "");
    if (net)
      if (auto why = remove_verifier_network(docker_, *net); !why.empty())
        note("WARNING", "grading", "the grader's network: " + why);
    return run;
  };
  ev.run_checks = [this]() {
    auto ahead = take_grader_ahead();
    return run_python_checks_container(docker_, task_, checks_inputs(), ahead ? ahead->id : "");
  };
  if (local_) local_->use_sandbox(ev, docker_);
  // env.yaml shows the files as grading read them (grading runs on this thread alone).
  if (ev.files)
    ev.files = [this, inner = std::move(ev.files)](const std::string& glob) {
      auto got = inner(glob);
      if (got) keep_graded_files(r_, *got);
      return got;
    };
  return ev;
}

// What a checks.py suite is given: the transcript, and the state before and after the agent.
ChecksInputs TrialRun::checks_inputs() const {
  ChecksInputs in;
  in.labels = up_->labels;
  in.transcript_json = checks_transcript_json(r_.episode.messages);
  in.initial_state_json = !server_initial_state_.empty()              ? server_initial_state_
                          : !task_.initial_state.json_db_json.empty() ? task_.initial_state.json_db_json
                                                                      : std::string("{}");
  in.final_state_json = r_.final_state_json;
  return in;
}

Result<grading::JudgeReply> TrialRun::judge(const std::string& model_ref, const std::string& system,
                                            const std::string& user) {
  auto client = env_.models(model_ref.empty() ? "judge" : model_ref);
  if (!client) return client.fail();
  ChatRequest req;
  req.messages = {{ChatMessage::Role::kSystem, system}, {ChatMessage::Role::kUser, user}};
  req.deadline = Deadline::in(env_.run->turn_timeout);
  auto resp = (*client)->chat(req);
  if (!resp) return resp.fail();
  return grading::JudgeReply{resp->message.content, resp->cost_usd};
}

// Where a grader container comes from: this trial's stack, runner and image.
GraderSpec TrialRun::grader_spec() const {
  GraderSpec gs{up_->labels, runner_, workspace(), up_->plan.runner.image};
  gs.host = env_.host;
  gs.workspace_limit = workspace_limit();
  gs.cancel = env_.interrupted;
  return gs;
}

// The trial's grader made while its agent runs (or while it waits for its turn), so the grade
// phase pays only for copying the evidence in and running: a fresh container for this trial
// alone, holding nothing of any agent's (grader_ahead.h). Started from up (start_grader_ahead
// as soon as the stack's labels are known); here for a trial whose up did not (a Harbor task).
void TrialRun::prepare_grader_ahead() {
  if (local_ || !up_ || grader_ahead_.started()) return;
  if (task_.harbor) return prepare_harbor_ahead();
  start_grader_ahead(up_->labels, up_->plan.runner.image, workspace());
}

// A test-script or checks.py grader from what it needs: the stack's labels (teardown finds it by
// them), the runner's image and workspace path. Not a Harbor verifier: it reads setup's env.
void TrialRun::start_grader_ahead(const stack::StackLabels& labels, const std::string& image,
                                  const std::string& workspace) {
  const auto& cc = task_.grading.custom_checks;
  if (local_ || task_.harbor || !cc.present || grader_ahead_.started()) return;
  if (cc.python()) {
    grader_ahead_.start([this, labels]() -> Result<AheadGrader> {
      auto id = prepare_python_checks(docker_, task_, labels);
      if (!id) return id.fail_with("preparing the checks ahead");
      return AheadGrader{*id, std::nullopt};
    });
    return;
  }
  GraderSpec spec{labels, "", workspace, image};  // no runner: nothing of the agent's goes in ahead
  spec.host = env_.host;
  spec.workspace_limit = workspace_limit();
  spec.cancel = env_.interrupted;
  grader_ahead_.start([this, spec = std::move(spec)]() mutable -> Result<AheadGrader> {
    auto net = up_grade_network();
    if (!net) return net.fail();
    AheadGrader g{"", std::move(*net)};
    if (g.network) spec.network = &*g.network;
    auto id = prepare_grader(docker_, spec, task_);
    if (!id) {
      if (g.network) (void)remove_verifier_network(docker_, *g.network);
      return id.fail();
    }
    g.id = *id;
    return g;
  });
}

// network_policy's grade for a task's test scripts (docs/environment.md "Per-phase policy"): a
// network of the grader's own, never the trial's; none under no_internet.
Result<std::optional<VerifierNetwork>> TrialRun::up_grade_network() const {
  const auto& m = task_.environment.manifest;
  if (m.grade_network_policy == manifest::NetworkPolicy::kNoInternet) return std::optional<VerifierNetwork>();
  GraderNetworkSpec spec{task_.task_id, m.path, task_.dir, m.grade_network_policy, m.allowlist};
  return up_grader_network(docker_, spec, verifier_network_options());
}

// The grader made ahead, once ready, timed as ahead_grader (the grade phase's wait for it as
// ahead_grader_wait); nullopt when there is none (a fresh
// one is made then). The caller removes it.
std::optional<AheadGrader> TrialRun::take_grader_ahead() {
  const auto asked = Clock::now();
  auto taken = grader_ahead_.take();
  if (!taken) return std::nullopt;
  r_.phases["ahead_grader"] = taken->took;
  // The part of the grade phase spent waiting for it: its making not done when the agent was.
  r_.phases["ahead_grader_wait"] = elapsed_since(asked);
  if (taken->grader) return std::move(*taken->grader);
  note("WARNING", "grading", "no grader made ahead: " + taken->grader.error().what());
  return std::nullopt;
}

// A grader made ahead that grading never took (the trial ended first): removed with its network.
void TrialRun::discard_grader_ahead() { grader_ahead_.discard(docker_); }

std::uint64_t TrialRun::workspace_limit() const {
  return policy::workspace_limit_bytes(task_.environment.manifest.runner);
}

}  // namespace forge::trial
