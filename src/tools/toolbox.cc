// Assembles a trial's governed tool set.
#include "tools/toolbox.h"

#include <algorithm>
#include <cmath>

namespace forge::tools {

ToolPolicy policy_from(const manifest::ToolPolicyConfig& p) {
  ToolPolicy out;
  if (p.timeout_s) out.timeout = Millis(static_cast<long long>(std::llround(*p.timeout_s * 1000)));
  if (p.rate_limit) out.rate_limit = *p.rate_limit;
  if (p.rate_per_minute) out.rate_per_minute = *p.rate_per_minute;
  return out;
}

Result<std::unique_ptr<ToolExecutor>> make_toolbox(const ToolboxConfig& cfg) {
  ExecutorConfig ec;
  // A task's MCP tool shadows the built-in of the same name: the task knows its domain.
  for (auto& t : builtin_tools(cfg.builtins)) {
    bool shadowed = false;
    for (const auto& e : cfg.extra) shadowed = shadowed || e->spec().name == t->spec().name;
    if (!shadowed) ec.tools.push_back(std::move(t));
  }
  ec.tools.insert(ec.tools.end(), cfg.extra.begin(), cfg.extra.end());
  if (cfg.tools.declared) {
    ec.agent_enabled = cfg.tools.agent_enabled;
    ec.user_enabled = cfg.tools.user_enabled;
    if (cfg.tools.mcp_tools_for_agent)
      for (const auto& e : cfg.extra)
        if (std::find(ec.agent_enabled.begin(), ec.agent_enabled.end(), e->spec().name) == ec.agent_enabled.end())
          ec.agent_enabled.push_back(e->spec().name);
  } else {
    for (const auto& t : ec.tools) ec.agent_enabled.push_back(t->spec().name);
  }
  for (const auto& [name, p] : cfg.tools.policies) ec.policies[name] = policy_from(p);
  ec.log = cfg.log;
  ec.on_record = cfg.on_record;
  return ToolExecutor::create(std::move(ec));
}

}  // namespace forge::tools
