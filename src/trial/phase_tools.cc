// The tools phase: the agent's tools opened, every call logged; a Python server seeded.
#include "trial/trial_run.h"

#include "core/service_token.h"
#include "tools/python_server.h"
#include "trial/browser_use.h"
#include "trial/portal_use.h"
#include "trial/python_state.h"
#include "trial/rag_use.h"
#include "trial/trial_env.h"
#include "trial/trial_setup.h"

namespace forge::trial {

using results::InfraKind;

namespace {

// Whether either actor may call `tool` (a task without a tools block enables every built-in).
bool enables(const manifest::ToolsConfig& t, const std::string& tool) {
  if (!t.declared) return true;
  for (const auto* list : {&t.agent_enabled, &t.user_enabled})
    for (const auto& name : *list)
      if (name == tool) return true;
  return false;
}

}  // namespace

// Tools, with every call logged (requestor by actor) until grading starts.
Step TrialRun::open_tools() {
  progress("tools");
  tools::OpenOptions oo;
  oo.log = env_.log;
  oo.db = db_route();
  oo.rag = rag_route(task_, *up_, control_token_, trial_id_);
  oo.user = step_user_;
  oo.engine_is_local = env_.engine_is_local;
  if (!local_ && uses_browser(task_)) {
    auto b = start_browser(docker_, *up_, Deadline::in(Millis(60000)));
    if (!b) return classify_running(b.error(), InfraKind::kSandbox);
    browser_ = b->session;
    // Before the agent's first action: the pages' scripts write json-db through mock-web's portal.
    if (auto st = open_portal(docker_, *up_, b->container, control_token_, trial_id_); !st)
      return classify_running(st.error(), InfraKind::kDaemon);
    oo.browser = browser_route(task_, *up_, browser_);
  }
  oo.on_record = [this](const tools::CallRecord& rec) { record_tool_call(rec); };
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

// One tool call into the tool log and logs.yaml, unless grading has started; then the live view.
void TrialRun::record_tool_call(const tools::CallRecord& rec) {
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
}

// The host's own channel to json-db, never through the runner (db_client.h). The address is
// looked up at each request, so a failed lookup is that request's error.
DbTransport TrialRun::db_transport(const std::string& json_db) {
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
tools::DbRoute TrialRun::db_route() const {
  tools::DbRoute route;
  if (!db_) return route;
  route.trial = trial_id_;
  const auto& tools = task_.environment.tools;
  if (enables(tools, "db_query")) route.read_token = agent_token(control_token_, trial_id_, TokenPermission::kRead);
  if (enables(tools, "db_update")) route.write_token = agent_token(control_token_, trial_id_, TokenPermission::kWrite);
  return route;
}

bool TrialRun::python_server() const {
  const auto& m = task_.environment.tools.mcp_server;
  return m && m->python();
}

// A Python server holds the domain state: seeded with json_db as written (else it keeps what
// its script loaded) — a fork's with the snapshot's set-up state instead — and read back before
// the agent runs, which golden replay starts from. The snapshot's trial snapshots it then.
Step TrialRun::seed_server() {
  if (!tools_.mcp) return Fault::setup("the task's Python server did not start");
  if (task_.grading.state_checks.present)
    if (auto st = check_server_golden_actions(task_.grading.state_checks.hash, tools_.mcp_tool_names); !st)
      return Fault::setup(st.error().with_context("grading " + task_.grading.path).what());
  const Deadline d = Deadline::in(Millis(30000));
  const std::string& seed = fork_server_state_.empty() ? task_.initial_state.json_db_json : fork_server_state_;
  if (!seed.empty())
    if (auto st = tools::set_server_state(*tools_.mcp, seed, d); !st)
      return classify_running(st.error(), InfraKind::kSandbox);
  auto state = tools::server_state(*tools_.mcp, d);
  if (!state) return classify_running(state.error(), InfraKind::kSandbox);
  server_initial_state_ = std::move(*state);
  if (snapshot_lease_.taking()) take_setup_snapshot(server_initial_state_);
  return std::nullopt;
}

}  // namespace forge::trial
