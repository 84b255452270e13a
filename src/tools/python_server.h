// Tolokaforge's Python tool server (`tools.agent.mcp_server: <script.py>`) in a container: the
// files copied beside it, its process as the server's own uid, and its domain state.
#pragma once

#include <memory>
#include <string>
#include <vector>

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

// How forgectl starts every Python of its own in a container (the tool server, golden replay's
// server, the checks driver): the image's interpreter by its path, isolated (-I: no user site, no
// PYTHON* variables, no script or working directory on sys.path), writing no bytecode (-B, as
// -I ignores PYTHONDONTWRITEBYTECODE). With a HOME, TMPDIR and working directory only its own uid
// can write, nothing the agent left (a usercustomize.py or .pth under an agent-writable HOME, a
// python3 earlier on PATH, a preloaded library) runs as that uid.
inline constexpr const char* kIsolatedPython[] = {"/usr/bin/python3", "-I", "-B"};
// The image's PATH (Debian's), set explicitly: a runner's env may put the workspace first.
inline constexpr const char* kSystemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// The server's command line and environment: isolated Python running forgectl_mcp on `script`;
// HOME and TMPDIR its own tree `dir` (0700, its uid's); no library preloaded.
std::vector<std::string> python_server_command(const std::string& script);
std::vector<std::string> python_server_env(const std::string& dir);

// Starts the server (python_server_command) in `container` as the server's uid, cwd the
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
