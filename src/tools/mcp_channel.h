// How an MCP session's JSON-RPC messages travel: the seam between McpSession (the protocol:
// handshake, ids, tools/list, tools/call) and a transport (stdio over an exec in the runner,
// SSE or streamable HTTP to a service of the stack).
#pragma once

#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/result.h"

namespace forge::tools {

class McpChannel {
 public:
  virtual ~McpChannel() = default;
  // The protocol version forgectl asks for in `initialize` over this transport.
  virtual std::string_view protocol_version() const = 0;
  // Sends one JSON-RPC message (a request or a notification).
  virtual Status send(const std::string& message, Deadline deadline) = 0;
  // The server's next message, as text; kTimeout at the deadline.
  virtual Result<std::string> receive(Deadline deadline) = 0;
  // The version the server chose in its `initialize` result (streamable HTTP sends it on every
  // later request).
  virtual void initialized(std::string_view version) { (void)version; }
  // What the server said besides its messages (a stdio server's stderr), for diagnostics.
  virtual std::string diagnostics() const { return {}; }
};

}  // namespace forge::tools
