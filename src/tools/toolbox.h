// Assembles the governed tool set of one trial from a task's tools block: the built-ins acting in
// its sandbox, the MCP server's tools, the enabled lists and the policies.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "manifest/tools_config.h"
#include "tools/builtin_tools.h"
#include "tools/executor.h"

namespace forge::tools {

struct ToolboxConfig {
  manifest::ToolsConfig tools;
  BuiltinOptions builtins;                           // the sandbox, bash's environment, http routing
  std::vector<std::shared_ptr<Tool>> extra;          // the MCP server's tools
  Logger* log = nullptr;
  std::function<void(const CallRecord&)> on_record;  // trajectory and logs; already redacted
};

// A task without a tools block gets every built-in for the agent and none for the user; its MCP
// tools, when it has a server, are enabled for the agent too.
Result<std::unique_ptr<ToolExecutor>> make_toolbox(const ToolboxConfig& cfg);

// ToolPolicy from the task's tools.policies entry.
ToolPolicy policy_from(const manifest::ToolPolicyConfig& p);

}  // namespace forge::tools
