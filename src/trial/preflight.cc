// The preflight checks.
#include "trial/preflight.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "agent/agent.h"
#include "agent/llm_factory.h"
#include "core/jsonpath.h"
#include "manifest/harbor/harbor_load.h"
#include "policy/allowlist.h"
#include "policy/topology.h"
#include "tools/builtin_tools.h"
#include "trial/browser_use.h"
#include "trial/golden_replay.h"
#include "trial/harbor_trial.h"
#include "trial/local_trial.h"
#include "trial/mock_web_use.h"
#include "trial/rag_use.h"

namespace forge::trial {

namespace {

namespace fs = std::filesystem;

std::string at(const manifest::SourceLocation& w, const std::string& fallback) { return location(w, fallback); }

bool has_llm_agent(const PreflightInput& in) {
  for (const auto& a : in.agents)
    if (a.kind == AgentChoice::Kind::kLlm) return true;
  return false;
}

bool has_agent(const PreflightInput& in, AgentChoice::Kind k) {
  for (const auto& a : in.agents)
    if (a.kind == k) return true;
  return false;
}

// A scripted user's own tool calls go through the executor as the user: each must be a tool
// tools.user.enabled lists, or every trial would end with the call refused.
void check_user_calls(const manifest::TaskConfig& t, std::vector<Problem>& out) {
  const auto& enabled = t.environment.tools.user_enabled;
  for (std::size_t i = 0; i < t.user_simulator.scripted_flow.size(); ++i)
    for (const auto& c : t.user_simulator.scripted_flow[i].tool_calls)
      if (std::find(enabled.begin(), enabled.end(), c.name) == enabled.end())
        out.push_back({t.path, "user_simulator.scripted_flow[" + std::to_string(i) + "] calls '" + c.name +
                                   "', which tools.user.enabled does not list"});
}

// The tool names a task enables must exist: forgectl's built-ins, or its MCP server's (known
// before the run only from fixtures/tools.json; otherwise the server answers at start-up).
void check_tools(const manifest::TaskConfig& t, std::vector<Problem>& out) {
  const auto& tools = t.environment.tools;
  if (tools.mcp_server) {
    if (tools.mcp_server->command.empty()) out.push_back({at(tools.where, t.path), "tools.agent.mcp_server has no command"});
    return;
  }
  auto builtins = tools::builtin_tool_names();
  std::set<std::string> known(builtins.begin(), builtins.end());
  for (const auto* list : {&tools.agent_enabled, &tools.user_enabled})
    for (const auto& name : *list)
      if (!known.count(name))
        out.push_back({at(tools.where, t.path), "tool '" + name + "' is not a forgectl built-in and the task declares no "
                                                "mcp_server that could provide it"});
}

void check_jsonpaths(const manifest::TaskConfig& t, std::vector<Problem>& out) {
  for (const auto& a : t.grading.state_checks.jsonpaths) {
    if (a.path.empty()) continue;
    if (auto st = jsonpath_validate(a.path); !st)
      out.push_back({at(a.where, t.grading.path), "invalid JSONPath '" + a.path + "': " + st.error().message});
  }
}

// Golden replay applies each golden action on the host with forgectl's own replayer of the tool;
// a tool without one (an MCP tool, bash) cannot be replayed, and the task cannot be graded. A
// Python tool server's task replays on a fresh server instead: its actions name the server's
// tools, which are known only once it runs (phase_tools.cc checks them then, before the agent).
void check_golden(const manifest::TaskConfig& t, std::vector<Problem>& out) {
  if (!t.grading.state_checks.present) return;
  if (const auto& m = t.environment.tools.mcp_server; m && m->python()) return;
  if (auto st = check_golden_actions(t.grading.state_checks.hash, builtin_golden_replayers()); !st)
    out.push_back({t.grading.path, "state_checks.hash: " + st.error().message});
}

// What only the environment and its compose file together show (reserved names, allowlisted
// hosts shadowed, upstreams nobody could reach), as `forgectl up` would find it: planned with
// placeholder subnets and every passthrough variable set, without a daemon.
void check_topology(const manifest::TaskConfig& t, std::vector<Problem>& out) {
  policy::PlanOptions o{"fg-preflight-000000", {}, "proxy", [](const std::string&) { return std::optional<std::string>("x"); }};
  std::vector<policy::Ipv4Net> nets(policy::network_keys(t.environment).size(), policy::Ipv4Net{0x0ae70000, 28});
  if (auto plan = policy::plan_stack(t.environment, o, nets); !plan) out.push_back({t.path, plan.error().message});
}

// A model a task routes to ("judge", "user", a model_ref) must be an entry of the run config (or
// provider/name) whose provider, base_url and key resolve.
void check_route(const std::string& key, const std::string& why, const std::string& where, const PreflightInput& in,
                 std::vector<Problem>& out) {
  manifest::ModelConfig m;
  if (in.run)
    if (auto it = in.run->models.find(key); it != in.run->models.end()) m = it->second;
  if (m.provider.empty()) {
    auto slash = key.find('/');
    if (slash == std::string::npos) {
      out.push_back({where, why + " needs models." + key + " in the run config (give --config with a models." + key + " entry)"});
      return;
    }
    m.provider = key.substr(0, slash);
    m.name = key.substr(slash + 1);
  }
  if (!in.llm) return;
  if (auto r = agent::resolve_model(m, *in.llm); !r) out.push_back({where, why + ": " + r.error().what()});
}

}  // namespace

std::string location(const manifest::SourceLocation& w, const std::string& fallback) {
  if (w.file.empty()) return fallback;
  return w.file + (w.line > 0 ? ":" + std::to_string(w.line) + ":" + std::to_string(w.column) : "");
}

// A multi-step task's steps may each have their own allowlist, up to policy::kMaxAllowlists
// different ones (the resolver switches between them by signal).
void check_step_networks(const manifest::HarborTask& h, std::vector<Problem>& out) {
  std::vector<std::vector<std::string>> lists;
  for (const auto& st : h.steps) {
    const auto& net = manifest::agent_network(h, &st);
    if (net.mode != manifest::NetworkMode::kAllowlist) continue;
    auto norm = policy::normalise_allowlist(net.allowed_hosts);
    if (!norm) continue;  // the task's load names it
    if (std::find(lists.begin(), lists.end(), *norm) == lists.end()) lists.push_back(std::move(*norm));
    if (lists.size() == policy::kMaxAllowlists + 1)
      out.push_back({location(st.where, h.config_path),
                     "step '" + st.name + "': more than " + std::to_string(policy::kMaxAllowlists) +
                         " different allowlists among the steps; forgectl switches between at most that many"});
  }
}

// A Harbor task's settings that would fail every trial the same way: a [verifier].user given as
// ids that check_verifier_ids refuses (a name needs the image: the trial checks it), and env
// templates without a fallback whose variable the run does not pass.
void check_harbor(const manifest::TaskConfig& t, const PreflightInput& in, std::vector<Problem>& out) {
  if (!t.harbor) return;
  const manifest::HarborTask& h = *t.harbor;
  check_step_networks(h, out);
  for (const auto& st : h.steps) {
    const std::string at = location(st.where, h.config_path);
    const std::string step = "step '" + st.name + "': ";
    unsigned uid = 0, gid = 0;
    const std::string& su = st.verifier.user;
    if (su == "root" || policy::parse_user_ids(su, uid, gid))
      if (auto ck = check_verifier_ids(uid, gid, "[steps.verifier].user = \"" + su + "\""); !ck)
        out.push_back({at, step + ck.error().message});
  }
  const std::string& user = h.verifier.user;
  unsigned uid = 0, gid = 0;
  if (user == "root" || policy::parse_user_ids(user, uid, gid))
    if (auto st = check_verifier_ids(uid, gid, "[verifier].user = \"" + user + "\""); !st)
      out.push_back({h.config_path, st.error().message});
  const std::vector<std::string> none;
  const auto& passed = in.run ? in.run->env_passthrough : none;
  std::vector<std::pair<const char*, const std::vector<manifest::EnvEntry>*>> tables = {
      {"[environment].env", &h.environment.env}, {"[verifier].env", &h.verifier.env}, {"[solution].env", &h.solution_env}};
  if (h.verifier.environment) tables.push_back({"[verifier.environment].env", &h.verifier.environment->env});
  for (const auto& st : h.steps) {
    tables.push_back({"[steps.verifier].env", &st.verifier.env});
    if (st.verifier.environment) tables.push_back({"[steps.verifier.environment].env", &st.verifier.environment->env});
  }
  std::set<std::pair<std::string, int>> seen;  // a step's table holds the task's entries too: each once
  for (auto [table, entries] : tables)
    for (const auto& e : *entries)
      if (e.is_template() && seen.insert({e.where.file + e.name, e.where.line}).second && !e.fallback && std::find(passed.begin(), passed.end(), e.host_var) == passed.end())
        out.push_back({e.where.file.empty() ? h.config_path : e.where.file + ":" + std::to_string(e.where.line),
                       std::string(table) + " " + e.name + " = \"" + e.value + "\": " + e.host_var +
                           " is not passed to this run and has no fallback (forgectl run --env-passthrough " +
                           e.host_var + ")"});
}

namespace {

// network_policy's grade is a network for a task's test scripts; a checks.py grader reads the
// recorded states and keeps none, so asking it one is a mistake to name, not a silent no.
void check_grade_network(const manifest::TaskConfig& t, std::vector<Problem>& out) {
  const auto& m = t.environment.manifest;
  if (t.harbor || m.grade_network_policy == manifest::NetworkPolicy::kNoInternet) return;
  if (t.grading.custom_checks.present && t.grading.custom_checks.python())
    out.push_back({location(m.where, t.path), std::string("network_policy grade: ") +
                                                 manifest::policy_name(m.grade_network_policy) +
                                                 " gives test scripts a network; checks.py graders run with none"});
}

}  // namespace

std::vector<Problem> check_task(const manifest::TaskConfig& t, const PreflightInput& in) {
  std::vector<Problem> out;
  check_harbor(t, in, out);
  check_grade_network(t, out);
  check_tools(t, out);
  check_user_calls(t, out);
  check_jsonpaths(t, out);
  check_golden(t, out);
  for (auto& p : check_mock_web(t)) out.push_back(std::move(p));
  for (auto& p : check_rag(t)) out.push_back(std::move(p));
  for (auto& p : check_browser(t)) out.push_back(std::move(p));
  if (runs_locally(t))
    for (auto& p : check_local(t)) out.push_back(std::move(p));
  else
    check_topology(t, out);
  if (runs_locally(t) && in.local_needs_consent && !in.allow_local && in.executor != manifest::ExecutorKind::kLocal)
    out.push_back({t.path,
                   "tools.executor: local runs this task's shell on this host with your rights; a task "
                   "file alone cannot ask for that: pass --allow-local to forgectl run (trusted tasks only)"});
  if (has_agent(in, AgentChoice::Kind::kOracle))
    if (auto o = agent::oracle_agent(t); !o) out.push_back({t.path, "--agent oracle: " + o.error().message});
  if (t.grading.llm_judge.present && !in.agents.empty()) {
    const std::string& ref = t.grading.llm_judge.model_ref;
    check_route(ref.empty() ? "judge" : ref, "llm_judge of task " + t.task_id, t.grading.path, in, out);
  }
  bool llm_user = t.user_simulator.mode == manifest::UserSimulatorConfig::Mode::kLlm;
  bool user_model = in.run && in.run->models.count("user");
  if (llm_user && (has_llm_agent(in) || user_model))
    check_route("user", "the LLM user of task " + t.task_id, t.path, in, out);
  return out;
}

std::vector<Problem> check_models(const std::vector<const manifest::TaskConfig*>&, const PreflightInput& in) {
  std::vector<Problem> out;
  for (const auto& a : in.agents)
    if (a.kind == AgentChoice::Kind::kLlm) check_route(a.model_key, "--agent " + a.spec, "", in, out);
  return out;
}

}  // namespace forge::trial
