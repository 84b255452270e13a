// A task's MCP server and the session forgectl holds with it: JSON-RPC (initialize,
// notifications/initialized, tools/list, tools/call) over an McpChannel. The stdio transport is
// here: the server runs inside the runner through one exec with stdin attached, spoken to with
// newline-delimited messages; HTTP transports are in mcp_http.h.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/client.h"
#include "tools/mcp_channel.h"
#include "tools/tool.h"

namespace forge::tools {

struct McpLaunch {
  std::string container;
  std::vector<std::string> command;
  std::vector<std::string> env;
  std::string user, workdir;
};

class McpSession {
 public:
  // Starts a stdio server in `launch.container` and completes the initialize handshake.
  static Result<std::unique_ptr<McpSession>> start(engine::Client& c, const McpLaunch& launch, Deadline deadline);
  // Completes the handshake over `channel`; `what` names the server in errors.
  static Result<std::unique_ptr<McpSession>> connect(std::unique_ptr<McpChannel> channel, const std::string& what,
                                                     Deadline deadline);
  McpSession(const McpSession&) = delete;
  McpSession& operator=(const McpSession&) = delete;

  // The server's tools as forgectl declares them (name, description, inputSchema).
  Result<std::vector<ToolSpec>> list_tools(Deadline deadline);
  // The text content of the result, joined by newlines; a result with isError is an error.
  Result<std::string> call_tool(const std::string& name, const json::Value& arguments, Deadline deadline);
  // What the server wrote to stderr so far (for diagnostics).
  std::string stderr_text() const;

 private:
  explicit McpSession(std::unique_ptr<McpChannel> channel) : channel_(std::move(channel)) {}
  Result<json::Document> request(const std::string& method, const std::string& params_json, Deadline deadline);

  std::unique_ptr<McpChannel> channel_;
  long next_id_ = 1;
  mutable std::mutex mu_;
};

// Tools that forward to the session; `fixture_specs` (fixtures/tools.json) win over tools/list.
std::vector<std::shared_ptr<Tool>> mcp_tools(std::shared_ptr<McpSession> session, const std::vector<ToolSpec>& specs);

// Reads fixtures/tools.json: a list of {name, description, parameters}.
Result<std::vector<ToolSpec>> load_tool_fixture(const std::string& path);
// The same from the file's text (read by the caller, e.g. beneath the task directory).
Result<std::vector<ToolSpec>> parse_tool_fixture(std::string_view text, const std::string& path);

}  // namespace forge::tools
