// MCP's HTTP transports, from the host to a service's address on the trial network.
#include "tools/mcp_http.h"

#include <algorithm>
#include <cctype>
#include <thread>

#include "core/json.h"
#include "core/limits.h"
#include "manifest/mcp_url.h"
#include "tools/http_stream.h"

namespace forge::tools {

namespace {

// A POST's reply that carries no message (202 Accepted, an SSE endpoint's answer) is drained
// up to this much.
constexpr std::size_t kMaxAckBytes = 64 * limits::kKiB;
// Mcp-Session-Id: visible ASCII, bounded.
constexpr std::size_t kMaxSessionIdBytes = 1024;
constexpr Millis kRetryEvery{200};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// "text/event-stream; charset=utf-8" → "text/event-stream".
std::string media_type(std::string_view content_type) {
  std::string t = lower(content_type.substr(0, content_type.find(';')));
  while (!t.empty() && t.back() == ' ') t.pop_back();
  return t;
}

std::string excerpt(const std::string& s, std::size_t n = 300) {
  std::string out;
  for (char c : s.substr(0, n)) out += (c >= 0x20 && c < 0x7f) ? c : ' ';
  return s.size() > n ? out + "…" : out;
}

HttpStreamRequest request_to(const McpHttpTarget& t, std::string method, const std::string& path) {
  HttpStreamRequest r;
  r.method = std::move(method);
  r.url = "http://" + t.address + path;
  r.headers.push_back("Host: " + t.host);
  return r;
}

// A service that has not started listening yet refuses the connection: tried again until the
// deadline while `retry` holds (a server's first contact).
Result<std::unique_ptr<HttpStream>> open_stream(const McpHttpTarget& t, const HttpStreamRequest& r, Deadline deadline,
                                                bool retry) {
  for (;;) {
    auto s = HttpStream::open(r, deadline);
    if (s || !retry || s.error().code != Errc::kUnavailable) return s;
    if (deadline.remaining() <= kRetryEvery)
      return fail(Errc::kTimeout, "MCP server '" + t.name + "': nothing listens at " + t.host + " (" + t.address +
                                      ") yet: " + s.error().message);
    std::this_thread::sleep_for(kRetryEvery);
  }
}

// A non-2xx reply as an error: the status and the start of the body.
Error status_error(const McpHttpTarget& t, const std::string& what, HttpStream& s, Deadline deadline) {
  auto body = s.read_all(deadline);
  return Error{s.status() >= 500 ? Errc::kServer : Errc::kProtocol,
               "MCP server '" + t.name + "': " + what + " answered HTTP " + std::to_string(s.status()) +
                   (body && !body->empty() ? ": " + excerpt(*body) : std::string()),
               {}};
}

// The SSE transport: one event stream for the session, messages POSTed to its endpoint.
class SseChannel : public McpChannel {
 public:
  explicit SseChannel(McpHttpTarget t) : t_(std::move(t)), parser_(limits::kMaxMcpMessageBytes) {}
  std::string_view protocol_version() const override { return "2024-11-05"; }

  Status open(Deadline deadline) {
    auto r = request_to(t_, "GET", t_.path);
    r.headers.push_back("Accept: text/event-stream");
    r.headers.push_back("Cache-Control: no-cache");
    r.max_body_bytes = limits::kMaxMcpStreamBytes;
    auto s = open_stream(t_, r, deadline, true);
    if (!s) return s.fail();
    stream_ = std::move(*s);
    if (stream_->status() != 200) return fail(status_error(t_, "GET " + t_.path, *stream_, deadline));
    if (media_type(stream_->header("content-type")) != "text/event-stream")
      return fail(Errc::kProtocol, "MCP server '" + t_.name + "': GET " + t_.path + " is not an event stream (" +
                                       stream_->header("content-type") + ")");
    for (int seen = 0; endpoint_.empty(); ++seen) {
      if (seen >= limits::kMaxMcpMessagesPerReply)
        return fail(Errc::kProtocol,
                    "MCP server '" + t_.name + "': no endpoint event in its first " + std::to_string(seen) + " events");
      auto e = next_event(deadline);
      if (!e) return e.fail_with("MCP server '" + t_.name + "': waiting for its endpoint");
      if (e->event == "message") messages_.push_back(std::move(e->data));
      if (e->event != "endpoint") continue;
      auto path = sse_endpoint_path(e->data, t_.path);
      if (!path) return path.fail_with("MCP server '" + t_.name + "'");
      endpoint_ = *path;
    }
    return {};
  }

  Status send(const std::string& message, Deadline deadline) override {
    auto r = request_to(t_, "POST", endpoint_);
    r.headers.push_back("Content-Type: application/json");
    r.body = message;
    r.max_body_bytes = kMaxAckBytes;
    auto s = open_stream(t_, r, deadline, false);
    if (!s) return s.fail_with("MCP server '" + t_.name + "': POST " + endpoint_);
    if ((*s)->status() < 200 || (*s)->status() > 299) return fail(status_error(t_, "POST " + endpoint_, **s, deadline));
    return {};  // the reply comes on the event stream; the POST's own body says nothing
  }

  Result<std::string> receive(Deadline deadline) override {
    for (int seen = 0; messages_.empty(); ++seen) {
      if (seen >= limits::kMaxMcpMessagesPerReply)
        return fail(Errc::kProtocol,
                    "MCP server '" + t_.name + "': " + std::to_string(seen) + " events and no message");
      auto e = next_event(deadline);
      if (!e) return e.fail_with("MCP server '" + t_.name + "'");
      if (e->event == "message") messages_.push_back(std::move(e->data));
    }
    std::string m = std::move(messages_.front());
    messages_.pop_front();
    return m;
  }

 private:
  Result<SseEvent> next_event(Deadline deadline) {
    while (events_.empty()) {
      if (stream_->ended()) return fail(Errc::kUnavailable, "the server closed its event stream");
      auto bytes = stream_->read(deadline);
      if (!bytes) return bytes.fail();
      if (auto st = parser_.feed(*bytes, [&](SseEvent&& e) { events_.push_back(std::move(e)); }); !st) return st.fail();
    }
    SseEvent e = std::move(events_.front());
    events_.pop_front();
    return e;
  }

  McpHttpTarget t_;
  std::unique_ptr<HttpStream> stream_;
  SseParser parser_;
  std::deque<SseEvent> events_;
  std::deque<std::string> messages_;
  std::string endpoint_;
};

// Streamable HTTP: every message a POST to the url; a request's reply is that POST's body.
class StreamableHttpChannel : public McpChannel {
 public:
  explicit StreamableHttpChannel(McpHttpTarget t) : t_(std::move(t)) {}
  std::string_view protocol_version() const override { return "2025-06-18"; }
  void initialized(std::string_view version) override { version_ = version; }

  Status send(const std::string& message, Deadline deadline) override {
    reply_.reset();
    reader_.reset();
    auto r = request_to(t_, "POST", t_.path);
    r.headers.push_back("Content-Type: application/json");
    r.headers.push_back("Accept: application/json, text/event-stream");
    if (!session_.empty()) r.headers.push_back("Mcp-Session-Id: " + session_);
    if (!version_.empty()) r.headers.push_back("MCP-Protocol-Version: " + version_);
    r.body = message;
    r.max_body_bytes = limits::kMaxMcpReplyBytes;
    auto s = open_stream(t_, r, deadline, !contacted_);
    if (!s) return s.fail_with("MCP server '" + t_.name + "': POST " + t_.path);
    contacted_ = true;
    HttpStream& reply = **s;
    if (reply.status() < 200 || reply.status() > 299) return fail(status_error(t_, "POST " + t_.path, reply, deadline));
    if (auto id = reply.header("mcp-session-id"); !id.empty()) {
      const bool visible = std::all_of(id.begin(), id.end(), [](char c) { return c > 0x20 && c < 0x7f; });
      if (!visible || id.size() > kMaxSessionIdBytes)
        return fail(Errc::kProtocol, "MCP server '" + t_.name + "': its Mcp-Session-Id is not up to " +
                                         std::to_string(kMaxSessionIdBytes) + " visible ASCII characters");
      session_ = id;
    }
    if (reply.status() == 202) return {};  // a notification's (or response's) acknowledgement: no body to read
    const std::string type = reply.header("content-type");
    if (type.empty()) return {};  // nothing to read: receive() says so if a reply was expected
    auto reader = McpReplyReader::for_content_type(type);
    if (!reader) return reader.fail_with("MCP server '" + t_.name + "'");
    reader_.emplace(std::move(*reader));
    reply_ = std::move(*s);
    return {};
  }

  Result<std::string> receive(Deadline deadline) override {
    for (;;) {
      if (reader_ && reader_->has_message()) return reader_->take_message();
      if (!reply_) return fail(Errc::kProtocol, "MCP server '" + t_.name + "': the reply ended without an answer");
      auto bytes = reply_->read(deadline);
      if (!bytes) return bytes.fail_with("MCP server '" + t_.name + "'");
      Status st = reply_->ended() && bytes->empty() ? reader_->finish() : reader_->feed(*bytes);
      if (reply_->ended() && bytes->empty()) reply_.reset();
      if (!st) return st.fail_with("MCP server '" + t_.name + "'");
    }
  }

 private:
  McpHttpTarget t_;
  std::string session_, version_;
  bool contacted_ = false;
  std::unique_ptr<HttpStream> reply_;
  std::optional<McpReplyReader> reader_;
};

}  // namespace

Result<std::unique_ptr<McpChannel>> open_sse_channel(const McpHttpTarget& target, Deadline deadline) {
  auto c = std::make_unique<SseChannel>(target);
  if (auto st = c->open(deadline); !st) return st.fail();
  return std::unique_ptr<McpChannel>(std::move(c));
}

std::unique_ptr<McpChannel> streamable_http_channel(const McpHttpTarget& target) {
  return std::make_unique<StreamableHttpChannel>(target);
}

Result<std::string> sse_endpoint_path(std::string_view endpoint, std::string_view url_path) {
  std::string e = std::string(endpoint);
  while (!e.empty() && (e.back() == ' ' || e.back() == '\t')) e.pop_back();
  if (e.empty()) return fail(Errc::kProtocol, "its endpoint event is empty");
  if (e.size() > manifest::kMaxMcpUrlBytes)
    return fail(Errc::kProtocol, "its endpoint is longer than " + std::to_string(manifest::kMaxMcpUrlBytes) + " bytes");
  if (!std::all_of(e.begin(), e.end(), [](char c) { return c > 0x20 && c < 0x7f; }))
    return fail(Errc::kProtocol, "its endpoint is not printable ASCII without spaces");
  if (const auto scheme = e.find("://"); scheme != std::string::npos && scheme < e.find_first_of("/?")) {
    const auto slash = e.find_first_of("/?", scheme + 3);
    std::string path = slash == std::string::npos ? "/" : e.substr(slash);
    return path.front() == '?' ? "/" + path : path;
  }
  if (e.front() == '/') return e;
  std::string_view dir = url_path.substr(0, url_path.find('?'));
  dir = dir.substr(0, dir.rfind('/') + 1);
  return (dir.empty() ? std::string("/") : std::string(dir)) + e;
}

McpReplyReader::McpReplyReader(bool stream) : stream_(stream), sse_(limits::kMaxMcpMessageBytes) {}

Result<McpReplyReader> McpReplyReader::for_content_type(std::string_view content_type) {
  const std::string t = media_type(content_type);
  if (t == "application/json") return McpReplyReader(false);
  if (t == "text/event-stream") return McpReplyReader(true);
  return fail(Errc::kProtocol, "its reply is " + (t.empty() ? std::string("of no content type") : t) +
                                   ", not application/json or text/event-stream");
}

Status McpReplyReader::feed(std::string_view bytes) {
  if (stream_)
    return sse_.feed(bytes, [&](SseEvent&& e) {
      if (e.event == "message") messages_.push_back(std::move(e.data));
    });
  if (json_.size() + bytes.size() > limits::kMaxMcpMessageBytes)
    return fail(Errc::kProtocol, "its reply has more than " + std::to_string(limits::kMaxMcpMessageBytes) + " bytes");
  json_.append(bytes);
  return {};
}

Status McpReplyReader::finish() {
  if (stream_ || json_.empty()) return {};
  json::Document doc;
  if (json::parse_document(doc, json_, limits::kMaxMcpMessageBytes) || !(doc.IsObject() || doc.IsArray()))
    return fail(Errc::kProtocol, "its reply is not a JSON-RPC message: '" + excerpt(json_, 120) + "'");
  if (doc.IsObject()) {
    messages_.push_back(std::move(json_));
  } else {
    for (const auto& m : doc.GetArray()) messages_.push_back(json::to_string(m));
  }
  json_.clear();
  return {};
}

std::string McpReplyReader::take_message() {
  std::string m = std::move(messages_.front());
  messages_.pop_front();
  return m;
}

}  // namespace forge::tools
