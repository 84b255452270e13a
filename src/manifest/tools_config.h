// The `tools:` block of a task.yaml: which tools each actor may call, their policies, an MCP
// server, and the executor. Value types; parsed in tools_parse.cc.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "manifest/compose.h"

namespace forge::manifest {

struct ToolPolicyConfig {
  std::optional<double> timeout_s;
  std::optional<int> rate_limit;       // calls per trial
  std::optional<int> rate_per_minute;
  SourceLocation where;
};

// A task's MCP stdio server, started inside the runner for the trial's lifetime.
struct McpServerConfig {
  std::vector<std::string> command;  // argv inside the runner
  // Task files the server needs, copied into the runner (under /.forgectl/task) before the
  // agent starts; grading assets are refused.
  std::vector<std::string> files;    // relative to the task directory
  // Tolokaforge's form, `mcp_server: <script.py>`: the script runs under forgectl's launcher in
  // forgectl/python:local as the tool server's own uid, with the files of `root` beside it
  // (manifest/python_server.h: server_copy_skips aside), and holds the task's domain state.
  std::string script;  // relative to root; empty: the command form above
  std::string root;    // absolute: the task directory, or the project directory the script is in
  SourceLocation where;

  bool python() const { return !script.empty(); }
  bool copies_files() const { return python() || !files.empty(); }
};

// How forgectl speaks to an MCP server: over an exec's stdin/stdout in the runner, or over HTTP
// to a service of the task's stack (MCP 2024-11-05's SSE transport, or 2025-03-26's streamable HTTP).
enum class McpTransport { kStdio, kSse, kStreamableHttp };
const char* transport_name(McpTransport t);  // "stdio" | "sse" | "streamable-http"

// A Harbor task's [[environment.mcp_servers]] over HTTP: a service of the task's stack that
// forgectl reaches from the host at the service's address on the trial's network (never a
// published port, never a host that is not the task's service).
struct McpHttpServerConfig {
  std::string name;
  McpTransport transport = McpTransport::kSse;
  std::string url;      // as written
  std::string service;  // the compose service the url's host names (its name or one of its aliases)
  std::string host;     // the url's host[:port] as written: the Host header
  int port = 80;
  std::string path;     // the url's path and query, "/" when it has none
  SourceLocation where;
};

// tools.agent.browser: Tolokaforge's settings of the `browser` tool (docs/tools.md "browser").
struct BrowserConfig {
  std::string initial_url;                   // opened when the browser starts; empty: about:blank
  std::vector<std::string> allowed_actions;  // empty: all 15 action types
  SourceLocation where;
};

enum class ExecutorKind { kContainer, kLocal };

struct ToolsConfig {
  bool declared = false;  // false: the task has no tools block (every built-in for the agent)
  std::vector<std::string> agent_enabled, user_enabled;
  std::optional<McpServerConfig> mcp_server;
  std::vector<McpHttpServerConfig> http_mcp_servers;
  // Every MCP tool is the agent's without being listed in agent_enabled (a Harbor task: its
  // agent gets the tools of the servers it declares).
  bool mcp_tools_for_agent = false;
  std::optional<BrowserConfig> browser;
  // tools.agent.mobile (Tolokaforge's mobile-viewport browser with apps): read only so preflight
  // can refuse it by name.
  std::optional<SourceLocation> mobile_where;
  std::map<std::string, ToolPolicyConfig> policies;
  ExecutorKind executor = ExecutorKind::kContainer;
  SourceLocation where;
};

}  // namespace forge::manifest
