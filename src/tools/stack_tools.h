// The tools of a running stack, as its task declares them: the agent loop, `forgectl tool` and
// `forgectl exec` all go through this one path.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/client.h"
#include "manifest/environment.h"
#include "policy/topology.h"
#include "tools/builtin_tools.h"
#include "tools/executor.h"
#include "tools/mcp_client.h"
#include "tools/sandbox.h"

namespace forge::tools {

// Where a task's MCP server files are in the runner: a link in the read-only helper volume to
// the small tmpfs volume up mounts for them (policy::kTaskFilesMount).
inline constexpr const char* kTaskFilesDir = policy::kTaskFilesDir;
// A Python server's tree, beneath policy::kTaskFilesMount (its uid's, 0700).
inline constexpr const char* kPythonServerDir = "server";

struct StackTools {
  std::string stack, runner;  // stack name, runner container id
  manifest::LoadedEnvironment env;
  std::shared_ptr<Sandbox> sandbox;
  std::shared_ptr<McpSession> mcp;  // when the task declares a stdio server
  std::vector<std::shared_ptr<McpSession>> http_mcp;  // its servers over HTTP (services of the stack)
  std::vector<std::string> mcp_tool_names;  // their tools (which shadow built-ins of the same name)
  std::unique_ptr<ToolExecutor> executor;
};

struct OpenOptions {
  Logger* log = nullptr;
  std::function<void(const CallRecord&)> on_record;
  Millis mcp_start_timeout{30000};
  bool start_mcp = true;  // false: only the sandbox (forgectl exec), no executor
  DbRoute db;             // the trial's json-db namespace and agent tokens, for db_query/db_update
  RagRoute rag;           // the trial's knowledge base and read token, for search_kb
  BrowserRoute browser;   // the trial's browser, for the browser tool (trial/browser_use.h)
  // The user the agent's helper channel runs as instead of the runner's own (a Harbor step's
  // [steps.agent].user: the same runner, another user); empty: the runner's.
  std::string user;
  // Whether the engine is this host's: only then does the host route to the trial networks,
  // where a task's MCP servers over HTTP are reached (else they are refused).
  bool engine_is_local = true;
};

// Finds the stack's running runner, reloads its task (the io.forgectl.source label), connects
// to forgectl's helper in the runner, starts the task's MCP server if it has one, and builds
// the governed executor.
Result<StackTools> open_stack_tools(engine::Client& c, const std::string& stack, const OpenOptions& opts);
// The same with the task's environment as the caller holds it, for a task no task.yaml describes
// (a Harbor task: its runner's image and environment are the trial's).
Result<StackTools> open_stack_tools(engine::Client& c, const std::string& stack, const manifest::LoadedEnvironment& env,
                                    const OpenOptions& opts);

}  // namespace forge::tools
