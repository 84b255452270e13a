// One trial's lifecycle as named phases. Each phase returns nullopt to go on or the Fault that
// ends the trial; every error is classified in one place (classify), and teardown follows the
// phases whatever happened.
#include "trial/trial.h"

#include <algorithm>
#include <ctime>
#include <mutex>
#include <optional>
#include <set>

#include "core/files.h"
#include "core/scope_guard.h"
#include "core/parallel.h"
#include "core/service_token.h"
#include "engine/containers.h"
#include "engine/tar.h"
#include "grading/grader.h"
#include "manifest/harbor_load.h"
#include "policy/hardening.h"
#include "policy/topology.h"
#include "stack/quiesce.h"
#include "stack/teardown.h"
#include "stack/up.h"
#include "stack/workspace.h"
#include "tools/container_sandbox.h"
#include "tools/python_server.h"
#include "tools/stack_tools.h"
#include "trial/checks_run.h"
#include "trial/db_client.h"
#include "trial/fault.h"
#include "trial/golden_replay.h"
#include "trial/grading_sources.h"
#include "trial/harbor_artifacts.h"
#include "trial/harbor_health.h"
#include "trial/harbor_steps.h"
#include "trial/harbor_trial.h"
#include "trial/local_trial.h"
#include "trial/trial_env.h"
#include "trial/python_state.h"
#include "trial/sandbox_prep.h"
#include "trial/sandbox_watch.h"
#include "trial/trial_setup.h"
#include "trial/verifier_network.h"

namespace forge::trial {

std::string AgentChoice::label() const {
  switch (kind) {
    case Kind::kOracle: return "oracle";
    case Kind::kReplay: return "replay";
    case Kind::kNoop: return "noop";
    case Kind::kLlm:
      return "llm:" + model_key;  // the config key: one model at two settings stays two agents
  }
  return "unknown";
}

namespace {

using results::InfraKind;
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

Slots* slot(Admission* a, Slots Admission::*which) { return a ? &(a->*which) : nullptr; }

// Whether either actor may call `tool` (a task without a tools block enables every built-in).
bool enables(const manifest::ToolsConfig& t, const std::string& tool) {
  if (!t.declared) return true;
  for (const auto* list : {&t.agent_enabled, &t.user_enabled})
    for (const auto& name : *list)
      if (name == tool) return true;
  return false;
}

class TrialRun {
 public:
  TrialRun(const manifest::TaskConfig& task, int index, int attempt, const AgentChoice& choice, TrialEnv& env)
      : task_(task), choice_(choice), env_(env), docker_(*env.docker) {
    r_.task_id = task.task_id;
    r_.mock_web_url = task.initial_state.mock_web_base_url;
    r_.trial_index = index;
    r_.attempt = attempt;
    r_.agent = choice.label();
    trial_id_ = task.task_id + "_" + std::to_string(index);
  }

  TrialResult run() { return finish(begin()); }

  // Up → setup → tools: at the trial's turn, or ahead of it (prepare_trial).
  Step begin() {
    r_.started_at = iso_now();
    started_unix_ = static_cast<std::int64_t>(std::time(nullptr));
    Step s = up();
    if (!s) s = setup();
    if (!s) s = open_tools();
    return s;
  }

  // Agent → grade → down, after begin().
  TrialResult finish(Step s) {
    if (!s && task_.harbor && !task_.harbor->steps.empty()) {
      s = run_steps();
    } else {
      if (!s) s = agent();
      if (!s) s = after_agent();
      if (!s) s = grade();
    }
    if (s) end_with(*s);
    down();
    r_.finished_at = iso_now();
    return std::move(r_);
  }

  // Ahead of the turn, after begin(): the helper started now (its exec and handshake are not the
  // first tool call's), so the turn's first call is one request on an open channel.
  Step start_helper() {
    if (local_ || !tools_.sandbox) return std::nullopt;
    auto* box = dynamic_cast<tools::ContainerSandbox*>(tools_.sandbox.get());
    if (!box) return std::nullopt;
    if (auto pong = box->channel().call(R"({"op":"ping"})", Deadline::in(Millis(30000))); !pong)
      return classify_running(pong.error(), InfraKind::kSandbox);
    return std::nullopt;
  }

  // The stack's containers paused while the trial waits for its turn, in parallel; false (those
  // paused so far unpaused again) when the daemon refused one. Not a container with a healthcheck:
  // Docker keeps running its checks on a paused container, each fails, and after `retries` of them
  // it is "unhealthy" — which the end of the agent phase would blame on the agent.
  bool freeze() {
    if (!up_ || local_) return false;
    std::set<std::string> checked;
    for (const auto& c : up_->plan.services)
      if (c.healthcheck) checked.insert(c.key);
    if (up_->plan.proxy && up_->plan.proxy->healthcheck) checked.insert(up_->plan.proxy->key);
    if (up_->plan.runner.healthcheck) checked.insert(up_->plan.runner.key);
    std::vector<std::string> ids;
    for (const auto& [key, id] : up_->containers)
      if (!checked.count(key)) ids.push_back(id);
    if (ids.empty()) return false;
    std::vector<Status> st(ids.size());
    parallel_for(
        ids.size(), [&](std::size_t i) { st[i] = engine::pause_container(docker_, ids[i]); }, ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (st[i]) frozen_.push_back(ids[i]);
    if (frozen_.size() == ids.size()) return true;
    (void)thaw();
    return false;
  }
  bool frozen() const { return !frozen_.empty(); }

  // The turn: the stack unpaused, timed as "thaw".
  Step thaw() {
    if (frozen_.empty()) return std::nullopt;
    PhaseTimer t(r_, "thaw");
    std::vector<Status> st(frozen_.size());
    parallel_for(
        frozen_.size(), [&](std::size_t i) { st[i] = engine::unpause_container(docker_, frozen_[i]); }, frozen_.size());
    frozen_.clear();
    for (const auto& s : st)
      if (!s) return classify_running(s.error().with_context("thawing the prepared sandbox"), InfraKind::kDaemon);
    return std::nullopt;
  }

  // The turn of a trial prepared ahead: its attempt and progress now known, the phases run
  // ahead renamed, its start the turn's.
  void claim(int attempt) {
    r_.attempt = attempt;
    r_.started_at = iso_now();
    for (const char* k : {"reserve", "up", "setup"})
      if (auto it = r_.phases.find(k); it != r_.phases.end()) {
        r_.phases[std::string("ahead_") + k] = it->second;
        r_.phases.erase(it);
      }
  }

  // A prepared trial never run: its tools closed, its stack handed to teardown.
  void abandon() { down(); }

 private:
  Step up() {
    if (runs_locally(task_)) {  // the local executor: a host directory instead of containers
      r_.unconfined = true;
      auto l = LocalTrial::start(task_, r_.trial_index, r_.attempt, env_);
      if (!l) return classify(l.error(), InfraKind::kHost);
      local_ = std::move(*l);
      up_ = local_->stack();
      r_.stack = up_->name;
      return std::nullopt;
    }
    auto waited = Clock::now();
    progress("reserve");
    Slots::Hold hold(slot(env_.admission, &Admission::up), env_.up_priority);
    progress("up");
    r_.phases["reserve"] = elapsed_since(waited);  // admission: waiting for a stack-creation slot
    if (interrupted()) return Fault::interruption();
    PhaseTimer t(r_, "up");
    // json-db's control token: in json-db's own environment and in this process, nowhere else.
    auto token = new_control_token();
    if (!token) return classify(token.error(), InfraKind::kHost);
    auto u = bring_up(task_, env_, std::move(*token));
    if (!u) return classify(u.error(), InfraKind::kDaemon);
    adopt(std::move(*u));
    return std::nullopt;
  }

  void adopt(PreparedSandbox&& p) {
    control_token_ = std::move(p.control_token);
    up_ = std::move(p.up);
    r_.stack = up_->name;
    runner_ = up_->containers.at(policy::kRunnerKey);
  }

  // Initial state: fixtures into json-db (by forgectl, with the control token: the agent cannot
  // init, reset or restore a namespace), files into the workspace, the task's pages into mock-web.
  Step setup() {
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
    if (task_.harbor) {
      auto resolved = resolve_harbor_env(*task_.harbor, env_.run->env_passthrough, env_.host.env);
      if (!resolved) return Fault::setup(resolved.error().what());
      harbor_env_ = std::move(*resolved);
      auto ids = runner_ids(docker_, runner_);
      if (!ids) return classify_running(ids.error(), InfraKind::kSandbox);
      agent_ids_ = *ids;
      if (auto st = put_harbor_logs(docker_, runner_, ids->uid, ids->gid); !st)
        return classify_running(st.error(), InfraKind::kDaemon);
    }
    if (auto it = up_->containers.find("mock-web"); it != up_->containers.end())
      if (auto st = copy_mock_web(docker_, it->second, task_); !st)
        return classify_running(st.error(), InfraKind::kDaemon);
    if (task_.harbor && task_.harbor->environment.healthcheck) return harbor_healthcheck(*task_.harbor->environment.healthcheck);
    return std::nullopt;
  }

  // [environment.healthcheck] (or a step's), before the agent: an environment that never becomes
  // healthy is the task's (an infra error of the sandbox, retried in a fresh one), never the
  // model's score. `who` prefixes the message ("step 'two': [steps.healthcheck]").
  Step harbor_healthcheck(const manifest::HealthcheckConfig& hc, const std::string& who = "") {
    progress("healthcheck");
    auto h = wait_harbor_healthy(docker_, runner_, hc, env_.interrupted);
    if (h) return std::nullopt;
    return harbor_env_fault(who.empty() ? h.error() : h.error().with_context(who));
  }

  // Whether a step's setup fault may be the agent's doing: a failed setup.sh or healthcheck of a
  // step after the first (the sandbox's infra error), not an interruption or the daemon's failure.
  bool agent_may_have_caused(const Fault& f) const {
    return step_index_ > 0 && !f.interrupted && f.outcome == results::Outcome::kInfraError &&
           f.kind == InfraKind::kSandbox;
  }

  // The agent had this runner for the earlier steps: what it left may be why this step's user,
  // setup.sh or healthcheck failed, so the trial is not retried as the environment's fault (an
  // agent could dodge its later steps so). This step and the rest count as verified with no
  // reward: 0 for every key.
  void score_rest_zero(const Fault& f, grading::Grade& total, std::vector<std::map<std::string, double>>& rewards) {
    const auto& steps = task_.harbor->steps;
    total.reasons.push_back("step " + step_->name + ": " + f.message + " — after the agent had the environment for " +
                            std::to_string(step_index_) + " step(s): this step and the " +
                            std::to_string(steps.size() - step_index_ - 1) + " after it score 0");
    zero_steps_from(step_index_, total, rewards);
  }

  // The steps from `from` on count as verified with no reward: 0 for every key ("final": 0).
  void zero_steps_from(std::size_t from, grading::Grade& total, std::vector<std::map<std::string, double>>& rewards) {
    const auto& steps = task_.harbor->steps;
    for (std::size_t j = from; j < steps.size(); ++j) {
      total.components["step." + steps[j].name] = 0;
      rewards.emplace_back();
    }
  }

  // A Harbor environment that is not ready for the agent (healthcheck, a step's setup.sh): the
  // sandbox's infra error (kUnavailable), an interruption, or what the daemon's failure says.
  Step harbor_env_fault(const Error& e) {
    if (e.code == Errc::kCancelled) return Fault::interruption();
    if (e.code == Errc::kUnavailable) return Fault::infra(InfraKind::kSandbox, e.what());
    return classify_running(e, InfraKind::kSandbox);
  }

  // A step whose [steps.agent].user differs from [agent]'s runs its agent as that user in the same
  // runner: its tool channel, its setup.sh, its /logs/agent and /logs/artifacts, the oracle's
  // /solution. `changed`: the user is not the previous step's (the channel must reopen).
  Step use_step_user(bool& changed) {
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
  Step prepare_step() {
    progress("setup");
    const auto& h = *task_.harbor;
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

  // The host's own channel to json-db, never through the runner (db_client.h). The address is
  // looked up at each request, so a failed lookup is that request's error.
  DbTransport db_transport(const std::string& json_db) {
    if (!env_.engine_is_local) return exec_db_transport(docker_, json_db, 8000);
    return [this, json_db, direct = DbTransport()](const DbRequest& req) mutable -> Result<DbReply> {
      if (!direct) {
        auto url = service_url(docker_, json_db, 8000);
        if (!url) return url.fail_with("finding json-db's address");
        direct = direct_db_transport(*url);
      }
      return direct(req);
    };
  }

  // The agent's db tools get agent tokens of the trial's namespace, each only for a tool the task
  // enables: db_query reads, db_update writes. Never the control token.
  tools::DbRoute db_route() const {
    tools::DbRoute route;
    if (!db_) return route;
    route.trial = trial_id_;
    const auto& tools = task_.environment.tools;
    if (enables(tools, "db_query")) route.read_token = agent_token(control_token_, trial_id_, TokenPermission::kRead);
    if (enables(tools, "db_update")) route.write_token = agent_token(control_token_, trial_id_, TokenPermission::kWrite);
    return route;
  }

  // Tools, with every call logged (requestor by actor) until grading starts.
  Step open_tools() {
    progress("tools");
    tools::OpenOptions oo;
    oo.log = env_.log;
    oo.db = db_route();
    oo.user = step_user_;
    oo.on_record = [this](const tools::CallRecord& rec) {
      {
        std::lock_guard lock(log_mu_);
        if (grading_) return;
        r_.tool_log.push_back({rec.actor == tools::Actor::kUser ? "user" : "assistant", rec});
        bool ok = rec.outcome == tools::ToolOutcome::Kind::kOk;
        std::map<std::string, std::string> ctx = {{"tool", rec.tool}, {"requestor", r_.tool_log.back().requestor},
                                                  {"duration_s", std::to_string(rec.elapsed.count() / 1000.0)}};
        if (!ok) ctx["error"] = rec.reason;
        add_event(r_, ok ? "INFO" : "WARNING", "tools", "tool " + rec.tool + ": " + tools::outcome_name(rec.outcome),
                  std::move(ctx));
      }
      progress(nullptr, &rec);
    };
    // A Harbor task's environment is the one loaded here: its runner has no task.yaml to reload.
    auto opened = local_          ? local_->open_tools(oo)
                  : task_.harbor ? tools::open_stack_tools(docker_, up_->name, task_.environment, oo)
                                 : tools::open_stack_tools(docker_, up_->name, oo);
    if (!opened) return classify_running(opened.error(), InfraKind::kSandbox);
    tools_ = std::move(*opened);
    // Golden replay's tools, checked before the agent runs: a task's MCP tool shadows the built-in
    // of its name, and has no host-side replayer yet.
    replayers_ = builtin_golden_replayers();
    for (const auto& name : tools_.mcp_tool_names) replayers_.remove(name);
    if (python_server()) return seed_server();
    if (task_.grading.state_checks.present)
      if (auto st = check_golden_actions(task_.grading.state_checks.hash, replayers_); !st)
        return Fault::setup(st.error().with_context("grading " + task_.grading.path).what());
    return std::nullopt;
  }

  bool python_server() const {
    const auto& m = task_.environment.tools.mcp_server;
    return m && m->python();
  }

  // A Python server holds the domain state: seeded with json_db as written (else it keeps what
  // its script loaded), and read back before the agent runs, which golden replay starts from.
  Step seed_server() {
    if (!tools_.mcp) return Fault::setup("the task's Python server did not start");
    if (task_.grading.state_checks.present)
      if (auto st = check_server_golden_actions(task_.grading.state_checks.hash, tools_.mcp_tool_names); !st)
        return Fault::setup(st.error().with_context("grading " + task_.grading.path).what());
    const Deadline d = Deadline::in(Millis(30000));
    if (!task_.initial_state.json_db_json.empty())
      if (auto st = tools::set_server_state(*tools_.mcp, task_.initial_state.json_db_json, d); !st)
        return classify_running(st.error(), InfraKind::kSandbox);
    auto state = tools::server_state(*tools_.mcp, d);
    if (!state) return classify_running(state.error(), InfraKind::kSandbox);
    server_initial_state_ = std::move(*state);
    return std::nullopt;
  }

  Result<std::unique_ptr<agent::Agent>> make_agent() {
    switch (choice_.kind) {
      case AgentChoice::Kind::kOracle: return agent::oracle_agent(task_);
      case AgentChoice::Kind::kReplay: return agent::replay_agent(choice_.replay_path);
      case AgentChoice::Kind::kNoop: return agent::noop_agent();
      case AgentChoice::Kind::kLlm: {
        auto client = env_.models(choice_.model_key);
        if (!client) return client.fail();
        return agent::llm_agent(*client);
      }
    }
    return fail(Errc::kInvalid, "unknown agent");
  }

  Result<std::unique_ptr<agent::UserSimulator>> make_user() {
    if (task_.user_simulator.mode == manifest::UserSimulatorConfig::Mode::kScripted)
      return agent::scripted_user(task_.user_simulator, tools_.executor.get());
    if (choice_.kind != AgentChoice::Kind::kLlm && !env_.run->models.count("user"))
      return std::unique_ptr<agent::UserSimulator>();
    auto client = env_.models("user");
    if (!client) return client.fail_with("the task's LLM user");
    return agent::llm_user(*client, task_.user_simulator, tools_.executor.get());
  }

  agent::EpisodeSpec episode_spec() const {
    agent::EpisodeSpec spec;
    spec.system_prompt = task_.system_prompt;
    // The loader could not know the image's WORKDIR: name the directory the stack really gave.
    if (task_.harbor && up_) spec.system_prompt = manifest::harbor_system_prompt(workspace());
    spec.initial_user_message = step_ ? step_->instruction : task_.initial_user_message;
    spec.max_turns = task_.max_turns.value_or(env_.run->max_turns);
    spec.episode_timeout = env_.run->episode_timeout;
    // A Harbor task's [agent] timeout_sec is its agent's time, as Harbor gives it.
    const auto& timeout = step_ ? step_->agent.timeout_sec : task_.harbor ? task_.harbor->agent.timeout_sec : std::nullopt;
    if (timeout) spec.episode_timeout = Millis(static_cast<long long>(*timeout * 1000));
    spec.turn_timeout = env_.run->turn_timeout;
    spec.stuck = env_.run->stuck;
    spec.exec_slots = slot(env_.admission, &Admission::exec);
    if (step_) spec.call_id_prefix = "s" + std::to_string(step_index_ + 1) + "-";  // unique across the steps
    return spec;
  }

  Step agent() {
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
    auto agent = make_agent();
    if (!agent) return Fault::setup(agent.error().what());
    auto user = make_user();
    if (!user) return Fault::setup(user.error().what());
    watch_ = std::make_unique<SandboxWatch>(docker_, *up_, env_.log);
    watch_->start(started_unix_);
    r_.episode = agent::run_episode(**agent, user->get(), *tools_.executor, episode_spec(), env_.interrupted);
    watch_->stop();
    note("INFO", "trial", std::string("episode ended: ") + agent::termination_name(r_.episode.termination),
         {{"turns", std::to_string(r_.episode.turns)}});
    if (!r_.episode.error.empty()) r_.error = r_.episode.error;
    return std::nullopt;
  }

  // How the agent phase ended decides whether there is anything to grade.
  Step after_agent() {
    const auto& ep = r_.episode;
    if (ep.termination == agent::Termination::kInterrupted) return Fault::interruption();
    // A rejected key or an unknown model: the same on every trial.
    if (ep.stops_run) return Fault::setup(ep.error);
    // A container that broke under the agent: who did it decides (sandbox_watch.h).
    if (auto broken = sandbox_verdict()) return broken;
    if (ep.termination == agent::Termination::kInfraError) return Fault::infra(InfraKind::kProvider, ep.error);
    // Nothing the agent started runs on into grading (stack/quiesce.h).
    if (!local_ && !agent_started_nothing())
      if (auto st = stack::stop_agent_processes(docker_, *up_); !st)
        return classify_running(st.error(), InfraKind::kSandbox);
    // A step's agent of its own user: its processes too.
    if (!local_ && !step_user_.empty())
      if (auto st = stop_user_processes(docker_, runner_, step_user_); !st)
        return classify_running(st.error(), InfraKind::kSandbox);
    return std::nullopt;
  }

  // Whether the agent phase cannot have left a process behind, so the --kill-all exec (a runc
  // exec, one of a trial's costlier daemon calls) is not needed: forgectl's own runner (its
  // command a sleep, nothing else runs as the agent), no MCP server, not a Harbor task (whose
  // oracle runs solve.sh), and every call of either actor a file tool the helper serves itself,
  // starting no process.
  bool agent_started_nothing() const {
    if (task_.harbor || task_.environment.tools.mcp_server || tools_.mcp) return false;
    if (!policy::is_own_runner_image(up_->plan.runner.image)) return false;
    return std::all_of(r_.tool_log.begin(), r_.tool_log.end(),
                       [](const ToolLogEntry& e) { return is_file_tool(e.record.tool); });
  }

  static bool is_file_tool(std::string_view name) {
    static constexpr std::string_view kFileTools[] = {"read_file",    "write_file", "append_file", "list_dir",
                                                      "replace_lines", "move_file", "copy_file",   "delete_file"};
    return std::find(std::begin(kFileTools), std::end(kFileTools), name) != std::end(kFileTools);
  }

  // Whether a call of either actor ran a program in the runner (bash, and any built-in but the file
  // tools and the server's own tools): then a task process dying beside it — the Python server
  // OOM-killed by the agent's memory, in the one cgroup they share — is the agent's doing.
  bool agent_ran_programs() const {
    const auto& mcp = tools_.mcp_tool_names;
    return std::any_of(r_.tool_log.begin(), r_.tool_log.end(), [&](const ToolLogEntry& e) {
      const auto& t = e.record.tool;
      return e.record.outcome != tools::ToolOutcome::Kind::kRefused && !is_file_tool(t) &&
             std::find(mcp.begin(), mcp.end(), t) == mcp.end();
    });
  }

  Step sandbox_verdict() {
    if (!watch_) return std::nullopt;
    bool suspect = std::any_of(r_.tool_log.begin(), r_.tool_log.end(), [](const ToolLogEntry& e) {
      return e.record.outcome == tools::ToolOutcome::Kind::kFailed;
    });
    SandboxVerdict v = watch_->verdict(suspect);
    switch (v.cause) {
      case SandboxVerdict::Cause::kIntact:
        return std::nullopt;
      case SandboxVerdict::Cause::kAgent:
        r_.episode.termination = agent::Termination::kSandboxDestroyed;
        return Fault::model(v.what);
      case SandboxVerdict::Cause::kOutside:
        return Fault::infra(InfraKind::kSandbox, v.what);
      case SandboxVerdict::Cause::kDaemon:
        return Fault::infra(InfraKind::kDaemon, v.what);
    }
    return std::nullopt;
  }

  grading::Evidence evidence() {
    grading::Evidence ev;
    ev.messages = r_.episode.messages;
    for (const auto& e : r_.tool_log)
      ev.tool_calls.push_back({e.requestor, e.record.tool, e.record.arguments, e.record.outcome == tools::ToolOutcome::Kind::kOk});
    ev.final_state_json = r_.final_state_json;
    ev.state = store_.get();
    WorkspaceLimits caps;
    caps.declared_bytes = workspace_limit();
    auto files = std::make_shared<WorkspaceFiles>(docker_, runner_, workspace(), path_globs(task_.grading), caps);
    ev.files = [files](const std::string& glob) { return files->match(glob); };
    ev.judge = [this](const std::string& model_ref, const std::string& system, const std::string& user) {
      return judge(model_ref, system, user);
    };
    ev.run_tests = [this]() { return run_grader(docker_, grader_spec(), task_); };
    ev.run_checks = [this]() {
      ChecksInputs in;
      in.stack = up_->name;
      in.run_id = env_.run_id;
      in.transcript_json = checks_transcript_json(r_.episode.messages);
      in.initial_state_json = !server_initial_state_.empty()                 ? server_initial_state_
                              : !task_.initial_state.json_db_json.empty() ? task_.initial_state.json_db_json
                                                                           : std::string("{}");
      in.final_state_json = r_.final_state_json;
      return run_python_checks_container(docker_, task_, in);
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

  Result<grading::JudgeReply> judge(const std::string& model_ref, const std::string& system, const std::string& user) {
    auto client = env_.models(model_ref.empty() ? "judge" : model_ref);
    if (!client) return client.fail();
    ChatRequest req;
    req.messages = {{ChatMessage::Role::kSystem, system}, {ChatMessage::Role::kUser, user}};
    req.deadline = Deadline::in(env_.run->turn_timeout);
    auto resp = (*client)->chat(req);
    if (!resp) return resp.fail();
    return grading::JudgeReply{resp->message.content, resp->cost_usd};
  }

  // The final state, then the grade, on the host.
  Step grade() {
    Slots::Hold hold(slot(env_.admission, &Admission::grade));
    progress("grade");
    PhaseTimer t(r_, "grade");
    {
      std::lock_guard lock(log_mu_);
      grading_ = true;
    }
    if (db_) {
      // From the host with the control token; golden replay in a namespace of its own (golden_replay.h).
      auto state = db_->state_json();
      if (!state) return classify_running(state.error().with_context("reading the final state"), InfraKind::kSandbox);
      r_.final_state_json = "{\"db\":" + *state + "}";
      store_ = std::make_unique<DbStateStore>(*db_, db_init_body_, replayers_);
    }
    if (python_server()) {
      // From the agent's server, before grading: the agent phase is over, nothing calls its tools.
      auto state = tools::server_state(*tools_.mcp, Deadline::in(Millis(30000)));
      if (!state && agent_ran_programs()) {
        // Never a retried, uncounted trial of the agent's making (docs/errors.md).
        r_.episode.termination = agent::Termination::kSandboxDestroyed;
        return Fault::model("the task's Python server stopped answering after the agent ran programs beside it in the "
                            "runner (its memory, its processes): graded 0 — " + state.error().what());
      }
      if (!state) return classify_running(state.error().with_context("reading the final state"), InfraKind::kSandbox);
      r_.final_state_json = "{\"db\":" + *state + "}";
      PythonServerGolden g;
      g.docker = &docker_;
      g.server = *task_.environment.tools.mcp_server;
      g.stack = up_->name;
      g.run_id = env_.run_id;
      g.initial_state = server_initial_state_;
      g.unstable_fields = task_.initial_state.unstable_fields;
      store_ = std::make_unique<PythonStateStore>(std::move(*state), std::move(g));
    }
    if (task_.harbor) return grade_harbor();
    grading::Evidence ev = evidence();
    auto g = grading::grade(task_.grading, ev);
    if (!g) return classify_running(g.error().with_context("grading"), InfraKind::kGrader);
    r_.grade = std::move(*g);
    r_.judge_cost_usd = r_.grade.judge_cost_usd;
    note("INFO", "grading", r_.grade.binary_pass ? "graded: pass" : "graded: fail",
         {{"score", std::to_string(r_.grade.score)}});
    return std::nullopt;
  }

  // [[verifier.collect]] hooks, then the declared artifacts: into the trial's logs/artifacts/, and
  // those outside the workspace into the verifier's fresh container, which otherwise holds only
  // the workspace.
  Step harbor_artifacts(HarborVerifierOptions& vo) {
    std::map<std::string, std::string> containers = up_->containers;
    containers["main"] = runner_;
    containers.erase(policy::kRunnerKey);
    containers.erase(policy::kProxyKey);
    const std::string who = "trial " + r_.task_id + "/" + std::to_string(r_.trial_index);
    if (!task_.harbor->verifier.collect.empty()) {
      auto notes = run_collect_hooks(docker_, containers, task_.harbor->verifier.collect, env_.interrupted);
      if (!notes && notes.error().code == Errc::kCancelled) return Fault::interruption();
      if (!notes) return classify_running(notes.error(), InfraKind::kDaemon);
      if (env_.log)
        for (const auto& n : *notes) env_.log->warn(who + ": " + n);
    }
    if (task_.harbor->artifacts.empty()) return std::nullopt;
    auto arts = collect_harbor_artifacts(docker_, containers, task_.harbor->artifacts, workspace());
    if (!arts) return classify_running(arts.error(), InfraKind::kDaemon);
    if (env_.log)
      for (const auto& n : arts->notes)
        env_.log->warn(who + ": artifacts: " + n);
    if (!arts->trial_tar.empty()) r_.log_tars.push_back(std::move(arts->trial_tar));
    if (!arts->verifier_tar.empty()) vo.artifact_tars.push_back(std::move(arts->verifier_tar));
    return std::nullopt;
  }

  // Who the tests run as ([verifier].user, or the step's, refused when unsafe: a setup error) and
  // their env (harbor_verifier_env): the verifier's environment ([verifier.environment].env, else
  // [environment].env), then [verifier].env (a step's tables: their own, else the task's).
  Step harbor_verifier(const GraderSpec& where, HarborVerifierOptions& vo) {
    auto as = harbor_verifier_identity(docker_, where, *task_.harbor, step_);
    if (!as)
      return as.error().code == Errc::kInvalid ? Fault::setup(as.error().what())
                                               : classify_running(as.error(), InfraKind::kGrader);
    vo.as = *as;
    vo.step = step_;
    vo.env = harbor_verifier_env(harbor_env_, step_ ? std::optional<std::size_t>(step_index_) : std::nullopt);
    return std::nullopt;
  }

  // Every entry of a tar under `prefix` ("steps/<name>/"): a step's logs beside the others'.
  static Result<std::string> under(const std::string& tar, const std::string& prefix) {
    auto entries = engine::read_tar(tar);
    if (!entries) return entries.fail();
    engine::TarWriter out;
    for (auto& e : *entries) {
      e.path = prefix + e.path;
      if (auto st = out.add_entry(e); !st) return st.fail();
    }
    return out.finish();
  }

  // /logs/agent and /logs/artifacts from the runner, the artifacts, then the task's (or the
  // step's) verifier: in a fresh container, or in the runner itself with --harbor-verifier shared
  // (a step's tests removed again after it). A step's logs land under logs/steps/<name>/.
  Step verify_harbor(HarborVerdict& verdict) {
    if (local_) return Fault::setup("a Harbor task runs in containers only, not on the local executor");
    auto logs = collect_harbor_logs(docker_, runner_);
    if (!logs) return classify_running(logs.error().with_context("collecting /logs"), InfraKind::kDaemon);
    const std::string prefix = step_ ? "steps/" + step_->name + "/" : "";
    std::vector<std::string> tars = std::move(*logs);
    const GraderSpec where = grader_spec();
    HarborVerifierOptions vo;
    std::size_t before = r_.log_tars.size();
    if (auto f = harbor_artifacts(vo)) return f;
    for (std::size_t i = before; i < r_.log_tars.size(); ++i) tars.push_back(std::move(r_.log_tars[i]));
    r_.log_tars.resize(before);
    if (auto f = harbor_verifier(where, vo)) return f;
    // A task (or step) that asks for a separate verifier ([verifier] environment_mode) keeps it.
    const auto& mode = step_ ? step_->verifier.mode : task_.harbor->verifier.mode;
    const bool shared = env_.run->harbor_shared_verifier && mode == manifest::VerifierMode::kShared;
    // The verifier's own network, when its mode asks for one (verifier_network.h); none in shared mode.
    Result<std::optional<VerifierNetwork>> net = std::optional<VerifierNetwork>();
    if (!shared)
      net = up_verifier_network(docker_, *task_.harbor, manifest::verifier_network(*task_.harbor, step_),
                                verifier_network_options());
    if (!net) return classify_running(net.error(), InfraKind::kDaemon);
    ScopeGuard drop_net([&] {
      if (!*net) return;
      if (auto why = remove_verifier_network(docker_, **net); !why.empty() && env_.log)
        env_.log->warn("trial " + r_.task_id + "/" + std::to_string(r_.trial_index) +
                       ": the verifier's network: " + why);
    });
    if (*net) vo.network = &**net;
    auto v = shared ? run_harbor_shared_verifier(docker_, where, *task_.harbor, vo)
                    : run_harbor_verifier(docker_, where, *task_.harbor, vo);
    if (!v) {
      if (v.error().code == Errc::kInvalid) return Fault::setup(v.error().what());
      if (v.error().code == Errc::kCancelled) return Fault::interruption();
      return classify_running(v.error(), InfraKind::kGrader);
    }
    if (!v->verifier_logs.empty()) tars.push_back(std::move(v->verifier_logs));
    for (auto& t : tars) {
      if (prefix.empty()) {
        r_.log_tars.push_back(std::move(t));
        continue;
      }
      auto moved = under(t, prefix);
      if (!moved) return classify_running(moved.error(), InfraKind::kHost);
      r_.log_tars.push_back(std::move(*moved));
    }
    verdict = std::move(*v);
    return std::nullopt;
  }

  // A step's own `artifacts`, after its verification: into logs/steps/<name>/artifacts/ beside
  // the task's, never into a verifier (the step's has run).
  Step step_artifacts() {
    if (step_->artifacts.empty()) return std::nullopt;
    std::map<std::string, std::string> containers = up_->containers;
    containers["main"] = runner_;
    containers.erase(policy::kRunnerKey);
    containers.erase(policy::kProxyKey);
    auto arts = collect_harbor_artifacts(docker_, containers, step_->artifacts, workspace());
    if (!arts) return classify_running(arts.error(), InfraKind::kDaemon);
    if (env_.log)
      for (const auto& n : arts->notes)
        env_.log->warn("trial " + r_.task_id + "/" + std::to_string(r_.trial_index) + ": step " + step_->name +
                       ": artifacts: " + n);
    if (arts->trial_tar.empty()) return std::nullopt;
    auto moved = under(arts->trial_tar, "steps/" + step_->name + "/");
    if (!moved) return classify_running(moved.error(), InfraKind::kHost);
    r_.log_tars.push_back(std::move(*moved));
    return std::nullopt;
  }

  Step grade_harbor() {
    HarborVerdict v;
    if (auto f = verify_harbor(v)) return f;
    r_.grade = std::move(v.grade);
    r_.verifier_exit_code = v.run.exit_code;
    r_.verifier_output = std::move(v.run.output);
    return std::nullopt;
  }

  // Whether a step's rewards fall short of its min_reward (the "reward" key) or min_rewards (each
  // named key): Harbor's gate for the remaining steps. A missing key counts as -infinity.
  static std::optional<std::string> short_of(const manifest::StepConfig& st, const grading::Grade& g) {
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
  static void append_episode(agent::Episode& all, agent::Episode&& ep) {
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

  // A multi-step task (docs/harbor.md "Multi-step tasks"): each [[steps]] entry in order in the
  // same runner — the agent with the step's instruction (the oracle with the step's solution),
  // its processes killed, the step's verifier — and the trial's score by the task's
  // multi_step_reward_strategy over the steps verified. A step short of its min_reward ends the
  // steps; those not run count for neither strategy (Harbor's rule).
  Step run_steps() {
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
      if (auto shortfall = short_of(*step_, v.grade); shortfall && i + 1 < h.steps.size()) {
        // The steps not run count as verified with no reward (0 for every key; "final": 0). Harbor
        // leaves them out, which lets an agent that does step one and misses the gate on purpose
        // score as if it had done every step.
        total.reasons.push_back("step " + step_->name + ": " + *shortfall + ": the remaining " +
                                std::to_string(h.steps.size() - i - 1) + " step(s) were not run and score 0");
        zero_steps_from(i + 1, total, rewards);
        break;
      }
    }
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
    return std::nullopt;
  }

  void down() {
    if (!up_) return;
    progress("down");
    std::string who = "trial " + r_.task_id + "/" + std::to_string(r_.trial_index);
    if (!local_ && env_.teardown) {  // off the critical path: the trial is done once graded
      tools_ = {};  // the helper channel and MCP session end before their containers do
      return env_.teardown->submit_stack(docker_, up_->name, who);
    }
    Slots::Hold hold(slot(env_.admission, &Admission::down));
    PhaseTimer t(r_, "down");
    tools_ = {};
    if (local_) return local_->down(docker_, env_.log);
    auto rep = stack::remove_stack(docker_, up_->name);
    if (!rep.clean()) note("WARNING", "trial", "teardown: " + rep.errors.front());
    if (!rep.clean() && env_.log) env_.log->warn(who + ": teardown: " + rep.errors.front());
  }

  void end_with(const Fault& f) {
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
  void progress(const char* phase, const tools::CallRecord* call = nullptr) {
    if (phase) note("INFO", "trial", std::string("phase ") + phase);
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

  // One logs.yaml entry; tool calls on other threads add theirs under the same lock.
  void note(const char* level, const char* module, std::string message, std::map<std::string, std::string> context = {}) {
    std::lock_guard lock(log_mu_);
    add_event(r_, level, module, std::move(message), std::move(context));
  }

  bool interrupted() const { return env_.interrupted && env_.interrupted->load() > 0; }
  const std::string& workspace() const { return up_->plan.runner.workdir; }
  // Where a grader container comes from: this trial's stack, runner and image.
  GraderSpec grader_spec() const {
    GraderSpec gs{up_->name, runner_, workspace(), up_->plan.runner.image, env_.run_id};
    gs.host = env_.host;
    gs.workspace_limit = workspace_limit();
    gs.cancel = env_.interrupted;
    return gs;
  }
  // The verifier's network stack: the trial's run, lease and interruption, the task's image as its
  // (idle) runner, so nothing beyond what the trial already has must be on the daemon.
  VerifierNetworkOptions verifier_network_options() const {
    VerifierNetworkOptions o;
    o.up.host = env_.host;
    o.up.engine_info = env_.engine_info;
    o.up.mode = stack::OwnerMode::kAttached;
    o.up.run_id = env_.run_id;
    o.up.interrupted = env_.interrupted;
    o.up.lease = std::chrono::duration_cast<std::chrono::seconds>(env_.run->episode_timeout) + std::chrono::hours(1);
    o.up.omit_unused_network = true;
    o.up.runner_image = up_->plan.runner.image;
    // A Harbor task cannot set it; a test whose "internet" is on a private subnet does, for both phases.
    o.allow_private = task_.environment.manifest.allow_private;
    return o;
  }
  std::uint64_t workspace_limit() const { return policy::workspace_limit_bytes(task_.environment.manifest.runner); }

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
  std::string db_init_body_;   // what the namespace was initialised with; golden replay starts from it
  GoldenReplayers replayers_;
  std::unique_ptr<grading::StateStore> store_;
  std::string server_initial_state_;  // a Python server's state before the agent ran
  std::unique_ptr<SandboxWatch> watch_;
  std::int64_t started_unix_ = 0;
  std::vector<std::string> frozen_;  // containers paused until the trial's turn
  tools::StackTools tools_;
  std::unique_ptr<LocalTrial> local_;  // the local executor's sandbox; null for a container trial
  AgentIds agent_ids_;                 // a Harbor task's: who owns /logs/agent and /solution
  HarborEnv harbor_env_;               // a Harbor task's env tables, resolved in setup
  const manifest::StepConfig* step_ = nullptr;  // the step running, in a multi-step task
  std::size_t step_index_ = 0;
  std::string step_user_;                     // the step's agent user when not [agent]'s; "": the runner's
  std::optional<AgentIds> solution_owner_;    // who owns /solution's content, once the oracle got it
  std::mutex log_mu_;
  bool grading_ = false;
  std::mutex progress_mu_;
  TrialProgress progress_;
};

}  // namespace

TrialResult run_trial(const manifest::TaskConfig& task, int trial_index, int attempt, const AgentChoice& choice,
                      TrialEnv& env) {
  return TrialRun(task, trial_index, attempt, choice, env).run();
}

// The prepared trial owns what its TrialRun refers to: its environment and agent choice.
struct PreparedTrial::Impl {
  TrialEnv env;
  AgentChoice choice;
  std::unique_ptr<TrialRun> run;
  std::shared_ptr<std::function<void(const TrialProgress&)>> progress;  // set at the turn
};

PreparedTrial::PreparedTrial(std::unique_ptr<Impl> i) : impl(std::move(i)) {}

PreparedTrial::~PreparedTrial() {
  if (impl && impl->run) impl->run->abandon();
}

bool PreparedTrial::freeze() { return impl && impl->run && impl->run->freeze(); }
bool PreparedTrial::frozen() const { return impl && impl->run && impl->run->frozen(); }

Result<std::unique_ptr<PreparedTrial>> prepare_trial(const manifest::TaskConfig& task, int trial_index,
                                                     const AgentChoice& agent, const TrialEnv& env) {
  auto impl = std::make_unique<PreparedTrial::Impl>();
  impl->env = env;
  impl->env.up_priority = Slots::Priority::kAhead;
  // The live view's ear is the turn's: until then, progress goes nowhere.
  impl->progress = std::make_shared<std::function<void(const TrialProgress&)>>();
  impl->env.on_progress = [sink = impl->progress](const TrialProgress& p) {
    if (*sink) (*sink)(p);
  };
  impl->choice = agent;
  impl->run = std::make_unique<TrialRun>(task, trial_index, 0, impl->choice, impl->env);
  Step s = impl->run->begin();
  if (!s) s = impl->run->start_helper();
  if (s) {
    impl->run->abandon();
    impl->run.reset();
    return fail(s->interrupted ? Errc::kCancelled : Errc::kUnavailable, s->message);
  }
  return std::make_unique<PreparedTrial>(std::move(impl));
}

TrialResult finish_trial(std::unique_ptr<PreparedTrial> p, int attempt,
                         std::function<void(const TrialProgress&)> on_progress) {
  auto& impl = *p->impl;
  *impl.progress = std::move(on_progress);
  std::unique_ptr<TrialRun> run = std::move(impl.run);
  run->claim(attempt);
  TrialResult r = run->finish(run->thaw());
  return r;
}

}  // namespace forge::trial
