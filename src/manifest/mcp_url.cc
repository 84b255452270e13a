// MCP server urls.
#include "manifest/mcp_url.h"

#include <cctype>

#include "manifest/tools_config.h"

namespace forge::manifest {

const char* transport_name(McpTransport t) {
  switch (t) {
    case McpTransport::kStdio:
      return "stdio";
    case McpTransport::kSse:
      return "sse";
    case McpTransport::kStreamableHttp:
      return "streamable-http";
  }
  return "stdio";
}

namespace {

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; }

// Printable ASCII without spaces: what may follow the authority unencoded.
bool path_char(char c) { return c > 0x20 && c < 0x7f; }

}  // namespace

Result<McpUrl> parse_mcp_url(std::string_view url) {
  if (url.size() > kMaxMcpUrlBytes)
    return fail(Errc::kInvalid, "the url is longer than " + std::to_string(kMaxMcpUrlBytes) + " bytes");
  constexpr std::string_view kScheme = "http://";
  if (url.substr(0, 8) == "https://")
    return fail(Errc::kInvalid,
                "https is not used: forgectl reaches the service on the trial's own network over http://");
  if (url.substr(0, kScheme.size()) != kScheme) return fail(Errc::kInvalid, "the url must start with http://");
  std::string_view rest = url.substr(kScheme.size());
  const std::size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  std::string_view tail = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  if (authority.find('@') != std::string_view::npos) return fail(Errc::kInvalid, "the url must not carry user info");
  if (tail.find('#') != std::string_view::npos) return fail(Errc::kInvalid, "the url must not have a fragment");
  McpUrl u;
  u.host_port = std::string(authority);
  std::string_view host = authority;
  if (auto colon = authority.find(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    std::string_view port = authority.substr(colon + 1);
    long value = 0;
    if (port.empty() || port.size() > 5) return fail(Errc::kInvalid, "the url's port is not a number from 1 to 65535");
    for (char c : port) {
      if (!std::isdigit(static_cast<unsigned char>(c)))
        return fail(Errc::kInvalid, "the url's port is not a number from 1 to 65535");
      value = value * 10 + (c - '0');
    }
    if (value < 1 || value > 65535) return fail(Errc::kInvalid, "the url's port is not a number from 1 to 65535");
    u.port = static_cast<int>(value);
  }
  if (host.empty()) return fail(Errc::kInvalid, "the url has no host");
  for (char c : host)
    if (!name_char(c)) return fail(Errc::kInvalid, "the url's host must be a service name of the task's stack");
  for (char c : tail)
    if (!path_char(c)) return fail(Errc::kInvalid, "the url's path must be printable ASCII without spaces");
  for (char c : host) u.host += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  u.path = tail.empty() ? "/" : tail.front() == '?' ? "/" + std::string(tail) : std::string(tail);
  return u;
}

}  // namespace forge::manifest
