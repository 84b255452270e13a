// Tolokaforge's Python tool server (`tools.agent.mcp_server: <script.py>`) in a container: the
// files copied beside it, its process as the server's own uid, and its domain state.
#pragma once

#include <memory>
#include <string>

#include "engine/client.h"
#include "manifest/tools_config.h"
#include "tools/mcp_client.h"

namespace forge::tools {

inline constexpr const char* kGetStateTool = "_tolokaforge_get_state_";
inline constexpr const char* kSetStateTool = "_tolokaforge_set_state_";

// The tar of the server's tree (m.root, less manifest::server_copy_skips) under `top` (a path
// relative to where it is unpacked): `top` owned by the server's uid with mode 0700, so no other
// uid in the container (the agent's) can list, read or write anything in it; every entry owned by
// the server's uid. Read beneath the root, within the tests/ limits.
Result<std::string> python_server_tar(const manifest::McpServerConfig& m, const std::string& top);

// Starts `python3 -m forgectl_mcp <dir>/<script>` in `container` as the server's uid, cwd the
// script's directory, and completes the MCP handshake. `dir` is where python_server_tar's `top`
// was unpacked.
Result<std::unique_ptr<McpSession>> start_python_server(engine::Client& c, const std::string& container,
                                                        const manifest::McpServerConfig& m, const std::string& dir,
                                                        Deadline deadline);

// The server's state through its internal tool: JSON text of an object, else kProtocol.
Result<std::string> server_state(McpSession& s, Deadline deadline);
// Replaces the server's state (a JSON object's text) through its internal tool.
Status set_server_state(McpSession& s, const std::string& state_json, Deadline deadline);

// Whether `name` is one of the server's internal tools, which are forgectl's, never an actor's.
bool is_internal_state_tool(std::string_view name);

}  // namespace forge::tools
