// MCP over HTTP: the event-stream parser, streamable HTTP's replies and the SSE endpoint, their
// limits; then both transports end to end against a Python stdlib server on 127.0.0.1.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/limits.h"
#include "support/mcp_http_server.h"
#include "support/process.h"
#include "tools/mcp_client.h"
#include "tools/mcp_http.h"
#include "tools/sse.h"

using namespace forge;
using namespace forge::tools;

namespace {

std::vector<SseEvent> parse_all(const std::vector<std::string>& pieces, std::size_t max = 1024) {
  SseParser p(max);
  std::vector<SseEvent> out;
  for (const auto& piece : pieces) {
    auto st = p.feed(piece, [&](SseEvent&& e) { out.push_back(std::move(e)); });
    REQUIRE_MESSAGE(st, (st ? "" : st.error().what()));
  }
  return out;
}

std::vector<std::string> messages_of(McpReplyReader& r) {
  std::vector<std::string> out;
  while (r.has_message()) out.push_back(r.take_message());
  return out;
}

// A port on 127.0.0.1 nobody listens on now.
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// The test server on the host, as a task's service would run it; its Host header is "mcp:PORT".
struct LocalServer {
  int port = free_port();
  std::unique_ptr<test::Process> proc;
  explicit LocalServer(const std::string& mode) {
    auto p = test::Process::spawn("/usr/bin/python3", {"-c", test::kHttpMcpServer, mode, std::to_string(port),
                                                       "mcp:" + std::to_string(port), "t_"});
    REQUIRE_MESSAGE(p, (p ? "" : p.error().what()));
    proc = std::move(*p);
  }
  McpHttpTarget target(const std::string& path) const {
    return {"t", "127.0.0.1:" + std::to_string(port), "mcp:" + std::to_string(port), path};
  }
};

std::unique_ptr<McpSession> connect(std::unique_ptr<McpChannel> ch) {
  auto s = McpSession::connect(std::move(ch), "test server", Deadline::in(Millis(10000)));
  REQUIRE_MESSAGE(s, (s ? "" : s.error().what()));
  return std::move(*s);
}

Result<std::string> call(McpSession& s, const std::string& name, const std::string& args = "{}") {
  json::Document d;
  REQUIRE_FALSE(json::parse_document(d, args));
  return s.call_tool(name, d, Deadline::in(Millis(10000)));
}

// What both transports must do once connected: tools listed, results back, errors as errors.
void exercise(McpSession& s) {
  auto tools = s.list_tools(Deadline::in(Millis(10000)));
  REQUIRE_MESSAGE(tools, (tools ? "" : tools.error().what()));
  std::vector<std::string> names;
  for (const auto& t : *tools) names.push_back(t.name);
  CHECK(names == std::vector<std::string>{"t_add", "t_whoami", "t_calls", "t_fail", "t_flood", "t_big"});
  auto sum = call(s, "t_add", R"({"a":2,"b":40})");
  REQUIRE_MESSAGE(sum, (sum ? "" : sum.error().what()));
  CHECK(*sum == "42");
  auto failed = call(s, "t_fail");
  REQUIRE_FALSE(failed);
  CHECK(failed.error().code == Errc::kServer);
  CHECK(failed.error().message == "it broke");
  // A result just under the message limit arrives whole; one over it is refused, not buffered.
  auto big = call(s, "t_big", R"({"n":1000000})");
  REQUIRE_MESSAGE(big, (big ? "" : big.error().what()));
  CHECK(big->size() == 1000000);
}

}  // namespace

TEST_CASE("sse parser: line ends, comments, multi-line data, pieces of any size") {
  const std::string stream =
      "\xEF\xBB\xBF: a comment\r\n\r\nevent: endpoint\r\ndata: /messages?s=1\r\n\r\n"
      "data: {\"a\":\ndata:1}\rid: 7\r\r"
      "event: other\ndata\n\n"
      "event: nodata\n\n";
  for (std::size_t step : {stream.size(), std::size_t{1}, std::size_t{3}}) {
    std::vector<std::string> pieces;
    for (std::size_t i = 0; i < stream.size(); i += step) pieces.push_back(stream.substr(i, step));
    auto events = parse_all(pieces);
    REQUIRE(events.size() == 3);
    CHECK(events[0].event == "endpoint");
    CHECK(events[0].data == "/messages?s=1");
    CHECK(events[1].event == "message");  // no event field: "message"
    CHECK(events[1].data == "{\"a\":\n1}");
    CHECK(events[1].id == "7");
    CHECK(events[2].event == "other");
    CHECK(events[2].data == "");
  }
  // A CRLF split between two pieces ends one line, not two (no blank line, no early dispatch).
  auto split = parse_all({"data: x\r", "\ndata: y\r\n\r\n"});
  REQUIRE(split.size() == 1);
  CHECK(split[0].data == "x\ny");
}

TEST_CASE("sse parser: an event past its limit is refused, however it is split") {
  SseParser p(16);
  std::vector<SseEvent> got;
  auto on = [&](SseEvent&& e) { got.push_back(std::move(e)); };
  REQUIRE(p.feed("data: 0123456\n\n", on));  // 13 bytes of fields: fine
  CHECK(got.size() == 1);
  REQUIRE(p.feed("data: 0123\n", on));
  auto st = p.feed("data: 456789\n", on);  // the same event's second line crosses 16
  REQUIRE_FALSE(st);
  CHECK(st.error().code == Errc::kProtocol);
  CHECK(st.error().message.find("more than 16 bytes") != std::string::npos);
  CHECK_FALSE(p.feed("\n", on));  // unusable afterwards
  // One endless line with no newline at all.
  SseParser q(limits::kMaxMcpMessageBytes);
  std::string chunk(64 * 1024, 'x');
  Status last;
  for (std::size_t sent = 0; last && sent <= limits::kMaxMcpMessageBytes; sent += chunk.size())
    last = q.feed(chunk, on);
  CHECK_FALSE(last);
}

TEST_CASE("streamable http replies: a JSON body, a batch, an event stream, and what is refused") {
  auto json = McpReplyReader::for_content_type("application/json; charset=utf-8");
  REQUIRE(json);
  REQUIRE(json->feed(R"({"jsonrpc":"2.0",)"));
  CHECK_FALSE(json->has_message());  // a JSON body is one message only once it has ended
  REQUIRE(json->feed(R"("id":1,"result":{}})"));
  REQUIRE(json->finish());
  CHECK(messages_of(*json) == std::vector<std::string>{R"({"jsonrpc":"2.0","id":1,"result":{}})"});

  auto batch = McpReplyReader::for_content_type("application/json");
  REQUIRE(batch->feed(R"([{"id":1},{"id":2}])"));
  REQUIRE(batch->finish());
  CHECK(messages_of(*batch) == std::vector<std::string>{R"({"id":1})", R"({"id":2})"});

  auto stream = McpReplyReader::for_content_type("Text/Event-Stream");
  REQUIRE(stream);
  REQUIRE(
      stream->feed("event: message\r\ndata: {\"method\":\"notifications/message\"}\r\n\r\n: ping\n\n"
                   "event: other\ndata: ignored\n\ndata: {\"id\":3}\n"));
  CHECK(messages_of(*stream) == std::vector<std::string>{R"({"method":"notifications/message"})"});
  REQUIRE(stream->feed("\n"));
  CHECK(messages_of(*stream) == std::vector<std::string>{R"({"id":3})"});

  auto html = McpReplyReader::for_content_type("text/html");
  REQUIRE_FALSE(html);
  CHECK(html.error().message.find("not application/json or text/event-stream") != std::string::npos);
  auto not_json = McpReplyReader::for_content_type("application/json");
  REQUIRE(not_json->feed("Internal error"));
  auto bad = not_json->finish();
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == Errc::kProtocol);
  auto huge = McpReplyReader::for_content_type("application/json");
  auto too_much = huge->feed(std::string(limits::kMaxMcpMessageBytes + 1, ' '));
  REQUIRE_FALSE(too_much);
  CHECK(too_much.error().code == Errc::kProtocol);
}

TEST_CASE("sse endpoint: a path on the server's own address, whatever host the event names") {
  CHECK(*sse_endpoint_path("/messages?session_id=1", "/sse") == "/messages?session_id=1");
  CHECK(*sse_endpoint_path("messages?x=1", "/mcp/sse?y=2") == "/mcp/messages?x=1");
  CHECK(*sse_endpoint_path("http://attacker.example:9/steal?x", "/sse") == "/steal?x");
  CHECK(*sse_endpoint_path("http://0.0.0.0:8000", "/sse") == "/");
  CHECK_FALSE(sse_endpoint_path("", "/sse"));
  CHECK_FALSE(sse_endpoint_path("/a b", "/sse"));
  CHECK_FALSE(sse_endpoint_path("/" + std::string(5000, 'a'), "/sse"));
}

TEST_CASE("mcp over sse: a Python server on the host, from handshake to tool results and limits") {
  LocalServer server("sse");
  auto ch = open_sse_channel(server.target("/sse"), Deadline::in(Millis(10000)));  // waits while it starts
  REQUIRE_MESSAGE(ch, (ch ? "" : ch.error().what()));
  auto s = connect(std::move(*ch));
  exercise(*s);
  auto who = call(*s, "t_whoami");
  REQUIRE(who);
  CHECK(*who == "served over sse");
  // 1100 notifications before the answer: more than a reply may wait through.
  auto flood = call(*s, "t_flood");
  REQUIRE_FALSE(flood);
  CHECK(flood.error().code == Errc::kProtocol);
  CHECK(flood.error().message.find("without answering tools/call") != std::string::npos);
}

TEST_CASE("mcp over sse: wrong paths, wrong hosts and silent ports are errors with a cause") {
  LocalServer server("sse");
  auto wrong_path = open_sse_channel(server.target("/events"), Deadline::in(Millis(10000)));
  REQUIRE_FALSE(wrong_path);
  CHECK(wrong_path.error().message.find("answered HTTP 404") != std::string::npos);
  McpHttpTarget wrong_host = server.target("/sse");
  wrong_host.host = "other:1";
  auto refused = open_sse_channel(wrong_host, Deadline::in(Millis(10000)));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("HTTP 421: wrong Host: other:1") != std::string::npos);
  McpHttpTarget nobody{"t", "127.0.0.1:" + std::to_string(free_port()), "mcp", "/sse"};
  auto silent = open_sse_channel(nobody, Deadline::in(Millis(700)));
  REQUIRE_FALSE(silent);
  CHECK(silent.error().code == Errc::kTimeout);
  CHECK(silent.error().message.find("nothing listens") != std::string::npos);
}

TEST_CASE("mcp over streamable http: session id and protocol version kept, JSON and stream replies, limits") {
  LocalServer server("streamable");
  // The server refuses a request without the session id and MCP-Protocol-Version of its
  // initialize, and answers tools/call as an event stream: both paths are taken here.
  auto s = connect(streamable_http_channel(server.target("/mcp")));
  exercise(*s);
  auto who = call(*s, "t_whoami");
  REQUIRE(who);
  CHECK(*who == "served over streamable");
  auto calls = call(*s, "t_calls");
  REQUIRE(calls);
  CHECK(*calls == "t_add,t_fail,t_big,t_whoami,t_calls");
  auto flood = call(*s, "t_flood");
  REQUIRE_FALSE(flood);
  CHECK(flood.error().code == Errc::kProtocol);
  // A result past the message limit is refused, and the session goes on.
  auto huge = call(*s, "t_big", R"({"n":)" + std::to_string(limits::kMaxMcpMessageBytes) + "}");
  REQUIRE_FALSE(huge);
  CHECK(huge.error().code == Errc::kProtocol);
  CHECK(huge.error().message.find("more than") != std::string::npos);
  auto again = call(*s, "t_add", R"({"a":1,"b":1})");
  REQUIRE_MESSAGE(again, (again ? "" : again.error().what()));
  CHECK(*again == "2");
  // The tool's deadline bounds the wait for a reply.
  json::Document none;
  none.Parse("{}");
  auto late = s->call_tool("t_whoami", none, Deadline::in(Millis(0)));
  REQUIRE_FALSE(late);
  CHECK(late.error().code == Errc::kTimeout);
}

TEST_CASE("mcp over streamable http: a server that is not one fails the handshake as the task's fault") {
  LocalServer server("sse");  // speaks SSE only: a POST to /mcp is a 404
  auto s = McpSession::connect(streamable_http_channel(server.target("/mcp")), "server 't' did not start",
                               Deadline::in(Millis(10000)));
  REQUIRE_FALSE(s);
  CHECK(s.error().code == Errc::kUnsupported);
  CHECK(s.error().what().find("server 't' did not start") != std::string::npos);
  CHECK(s.error().what().find("HTTP 404") != std::string::npos);
}
