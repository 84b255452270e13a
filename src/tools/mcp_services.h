// A task's MCP servers over HTTP (docs/harbor.md): each a service of the running stack, reached
// from the host at that service's address on the trial's network (nothing published, nothing
// but the service connected to), its tools governed like every other tool.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/client.h"
#include "manifest/tools_config.h"
#include "tools/mcp_client.h"

namespace forge::tools {

struct OpenedMcpServer {
  std::string name;
  std::shared_ptr<McpSession> session;
  std::vector<ToolSpec> tools;  // its tools/list
};

// Finds each server's service container in `stack`, connects (SSE or streamable HTTP) and reads
// its tools. kUnsupported on a remote engine: its trial networks are not routable from here.
Result<std::vector<OpenedMcpServer>> open_http_mcp_servers(engine::Client& c, const std::string& stack,
                                                           const std::vector<manifest::McpHttpServerConfig>& servers,
                                                           bool engine_is_local, Deadline deadline);

}  // namespace forge::tools
