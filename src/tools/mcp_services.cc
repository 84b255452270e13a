// MCP servers that are services of the stack.
#include "tools/mcp_services.h"

#include "engine/containers.h"
#include "stack/labels.h"
#include "tools/mcp_http.h"

namespace forge::tools {

namespace {

// The service's address on the stack's network (a service is on no other network).
Result<std::string> service_address(engine::Client& c, const std::string& stack, const std::string& service) {
  auto found = engine::list_containers(
      c,
      {{"label", {std::string(stack::kLabelStack) + "=" + stack, std::string(stack::kLabelService) + "=" + service}}});
  if (!found) return found.fail();
  if (found->empty()) return fail(Errc::kNotFound, "the stack has no container for service '" + service + "'");
  const auto& ctr = found->front();
  if (ctr.state != "running")
    return fail(Errc::kUnsupported, "service '" + service + "' is " + ctr.state + ", not running");
  auto info = engine::inspect_container(c, ctr.id);
  if (!info) return info.fail();
  for (const auto& [network, ep] : info->networks)
    if (!ep.ip_address.empty()) return ep.ip_address;
  return fail(Errc::kNotFound, "service '" + service + "' has no address on the stack's network");
}

Result<OpenedMcpServer> open_one(engine::Client& c, const std::string& stack, const manifest::McpHttpServerConfig& m,
                                 Deadline deadline) {
  const std::string what = "MCP server '" + m.name + "' (" + manifest::transport_name(m.transport) + ", " + m.url + ")";
  auto ip = service_address(c, stack, m.service);
  if (!ip) return ip.fail_with(what);
  McpHttpTarget target{m.name, *ip + ":" + std::to_string(m.port), m.host, m.path};
  Result<std::unique_ptr<McpChannel>> channel =
      m.transport == manifest::McpTransport::kSse
          ? open_sse_channel(target, deadline)
          : Result<std::unique_ptr<McpChannel>>(streamable_http_channel(target));
  if (!channel) {
    // The server answered and broke the protocol: the task's fault every time, as a stdio server's.
    Error e = channel.error();
    if (e.code != Errc::kTimeout && e.code != Errc::kCancelled) e.code = Errc::kUnsupported;
    return fail(e.with_context(what + " did not start"));
  }
  auto session = McpSession::connect(std::move(*channel), what + " did not start", deadline);
  if (!session) return session.fail();
  OpenedMcpServer out{m.name, std::move(*session), {}};
  auto tools = out.session->list_tools(deadline);
  if (!tools) return tools.fail_with(what);
  out.tools = std::move(*tools);
  return out;
}

}  // namespace

Result<std::vector<OpenedMcpServer>> open_http_mcp_servers(engine::Client& c, const std::string& stack,
                                                           const std::vector<manifest::McpHttpServerConfig>& servers,
                                                           bool engine_is_local, Deadline deadline) {
  std::vector<OpenedMcpServer> out;
  if (servers.empty()) return out;
  if (!engine_is_local)
    return fail(Errc::kUnsupported, "MCP server '" + servers.front().name +
                                        "' is served over HTTP: forgectl reaches it at its service's address on the "
                                        "trial network, which only a local engine's host routes");
  for (const auto& m : servers) {
    auto opened = open_one(c, stack, m, deadline);
    if (!opened) return opened.fail();
    out.push_back(std::move(*opened));
  }
  return out;
}

}  // namespace forge::tools
