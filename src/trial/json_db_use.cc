// Whether a task uses json-db.
#include "trial/json_db_use.h"

#include <algorithm>

#include "trial/preflight.h"

namespace forge::trial {

bool tool_enabled(const manifest::ToolsConfig& t, const std::string& name) {
  if (!t.declared) return true;  // every built-in, for the agent
  for (const auto* list : {&t.agent_enabled, &t.user_enabled})
    for (const auto& n : *list)
      if (n == name) return true;
  return false;
}

std::vector<JsonDbUse> json_db_uses(const manifest::TaskConfig& t) {
  std::vector<JsonDbUse> out;
  const auto& env = t.environment;
  std::string at_tools = location(env.tools.where, t.path);
  if (!t.initial_state.tables.empty()) out.push_back({t.path, "initial_state.json_db"});
  for (const char* tool : {"db_query", "db_update"})
    if (tool_enabled(env.tools, tool))
      out.push_back({at_tools, std::string("tool '") + tool + "'" +
                                   (env.tools.declared ? "" : " (the task has no tools block: every built-in is enabled)")});
  const auto& sc = t.grading.state_checks;
  if (sc.hash.enabled) out.push_back({t.grading.path, "state_checks.hash (golden replay)"});
  for (const auto& a : sc.jsonpaths)
    if (!a.path.empty())
      out.push_back({location(a.where, t.grading.path), "state_checks.jsonpaths '" + a.path + "' reads json-db's final state"});
  if (env.tools.mcp_server) out.push_back({at_tools, "tools.agent.mcp_server (a task server may use db-service)"});
  return out;
}

bool drop_unused_json_db(manifest::TaskConfig& t) {
  auto& env = t.environment;
  if (!env.manifest.compose_file.empty() || env.manifest.stack != "core" || uses_json_db(t)) return false;
  auto& svcs = env.compose.services;
  auto it = std::find_if(svcs.begin(), svcs.end(), [](const auto& s) { return s.name == "json-db"; });
  if (it == svcs.end()) return false;
  svcs.erase(it);
  return true;
}

}  // namespace forge::trial
