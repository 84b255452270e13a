// MCP over HTTP to a service of the task's stack, from the host: the SSE transport (MCP
// 2024-11-05: an event stream from GET, messages POSTed to the endpoint it names, replies on the
// stream) and streamable HTTP (2025-03-26 and later: each message POSTed to the url, its reply a
// JSON body or an event stream). forgectl connects only to the service's own address on the
// trial network (McpHttpTarget::address); every host the server names is taken as that one.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/result.h"
#include "tools/mcp_channel.h"
#include "tools/sse.h"

namespace forge::tools {

struct McpHttpTarget {
  std::string name;     // the server's name (task.toml), in messages
  std::string address;  // "10.231.0.5:8000": the service's address on the trial network, the url's port
  std::string host;     // the url's host[:port] as written: the Host header
  std::string path;     // the url's path and query
};

// The event stream opened and its endpoint read. A service that does not listen yet is tried
// again every 200 ms until the deadline.
Result<std::unique_ptr<McpChannel>> open_sse_channel(const McpHttpTarget& target, Deadline deadline);
// Nothing is sent until the first message (initialize); a refused connection is tried again
// then, as above.
std::unique_ptr<McpChannel> streamable_http_channel(const McpHttpTarget& target);

// Where an SSE server's `endpoint` event sends messages, as a path on the server's own address:
// "/messages?s=1" as it is; "messages?s=1" beside the url's path; an absolute url's path and query
// (its host is never connected to). kProtocol for an empty, overlong or unprintable endpoint.
Result<std::string> sse_endpoint_path(std::string_view endpoint, std::string_view url_path);

// The JSON-RPC messages of one streamable-HTTP reply, as its body arrives: an application/json
// body is one message (or a batch: its elements) when it ends; a text/event-stream body gives
// the data of each `message` event. Each message is bounded by limits::kMaxMcpMessageBytes.
class McpReplyReader {
 public:
  // kProtocol for a content type that is neither.
  static Result<McpReplyReader> for_content_type(std::string_view content_type);
  Status feed(std::string_view bytes);
  // The body ended.
  Status finish();
  bool has_message() const { return !messages_.empty(); }
  std::string take_message();

 private:
  explicit McpReplyReader(bool stream);
  bool stream_;
  std::string json_;
  SseParser sse_;
  std::deque<std::string> messages_;
};

}  // namespace forge::tools
