// The url of an MCP server over HTTP (a Harbor task's [[environment.mcp_servers]]): plain http to
// a name of the task's stack, nothing else, checked when the task is read.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"

namespace forge::manifest {

struct McpUrl {
  std::string host;  // as written, lower-cased: a compose service name or alias
  int port = 80;
  std::string host_port;  // host[:port] as written: the Host header
  std::string path;       // path and query; "/" when the url has none
};

// The longest url accepted.
inline constexpr std::size_t kMaxMcpUrlBytes = 2048;

// "http://host[:port][/path][?query]" with host a name (letters, digits, '-', '_', '.'); whether
// it is a service of the task is the caller's check. kInvalid saying what is wrong: another
// scheme (https too: the service is on the trial's own network), user info, a fragment.
Result<McpUrl> parse_mcp_url(std::string_view url);

}  // namespace forge::manifest
