// MCP sessions, and the stdio transport over an exec stream.
#include "tools/mcp_client.h"

#include <fstream>
#include <sstream>

#include "core/limits.h"
#include "engine/exec.h"
#include "engine/stdcopy.h"
#include "manifest/files.h"

namespace forge::tools {

namespace {

// A stdio server's stderr kept for diagnostics: its first bytes (a crash says why early).
constexpr std::size_t kMaxStderrBytes = 64 * limits::kKiB;

// Newline-delimited JSON-RPC over an exec's stdin and (demultiplexed) stdout.
class StdioChannel : public McpChannel {
 public:
  StdioChannel(std::string exec_id, std::unique_ptr<engine::Stream> s) : exec_id_(std::move(exec_id)), stream_(std::move(s)) {}
  ~StdioChannel() override {
    // Closing stdin asks a well-behaved server to exit; the exec ends with the runner otherwise.
    if (stream_) (void)stream_->close_write();
  }
  std::string_view protocol_version() const override { return "2024-11-05"; }
  std::string diagnostics() const override { return err_buf_; }

  Status send(const std::string& message, Deadline deadline) override {
    std::string data = message + "\n";
    std::string_view left = data;
    while (!left.empty()) {
      auto w = stream_->write_some(left);
      if (!w) return w.fail_with("writing to the MCP server");
      left.remove_prefix(w->bytes);
      if (w->would_block) {
        auto ready = stream_->wait(true, deadline);
        if (!ready) return ready.fail();
        if (!*ready) return fail(Errc::kTimeout, "the MCP server did not take its input in time");
      }
    }
    return {};
  }

  Result<std::string> receive(Deadline deadline) override {
    char buf[16384];
    for (;;) {
      if (auto nl = out_buf_.find('\n'); nl != std::string::npos) {
        std::string line = out_buf_.substr(0, nl);
        out_buf_.erase(0, nl + 1);
        return line;
      }
      if (out_buf_.size() > limits::kMaxMcpMessageBytes)
        return fail(Errc::kProtocol, "the MCP server wrote a line of more than " +
                                         std::to_string(limits::kMaxMcpMessageBytes) + " bytes");
      if (eof_)
        return fail(Errc::kUnavailable, "the MCP server exited" + (err_buf_.empty() ? "" : ": " + err_buf_.substr(0, 500)));
      auto r = stream_->read_some(buf);
      if (!r) return r.fail_with("reading from the MCP server");
      if (r->eof) {
        eof_ = true;
        continue;
      }
      if (r->would_block) {
        auto ready = stream_->wait(false, deadline);
        if (!ready) return ready.fail();
        if (!*ready) return fail(Errc::kTimeout, "the MCP server did not answer in time");
        continue;
      }
      auto st = demux_.feed(std::string_view(buf, r->bytes), [&](engine::StdStream s, std::string_view d) {
        if (s != engine::StdStream::kStderr)
          out_buf_.append(d);
        else if (err_buf_.size() < kMaxStderrBytes)
          err_buf_.append(d.substr(0, kMaxStderrBytes - err_buf_.size()));
      });
      if (!st) return st.fail();
    }
  }

 private:
  std::string exec_id_;
  std::unique_ptr<engine::Stream> stream_;
  engine::StdcopyDemuxer demux_;
  std::string out_buf_, err_buf_;
  bool eof_ = false;
};

}  // namespace

Result<std::unique_ptr<McpSession>> McpSession::start(engine::Client& c, const McpLaunch& l, Deadline deadline) {
  engine::ExecCreateSpec spec{l.command, l.env, l.user, l.workdir, true};
  auto id = engine::exec_create(c, l.container, spec);
  if (!id) return id.fail_with("starting the MCP server");
  auto stream = engine::exec_start(c, *id);
  if (!stream) return stream.fail_with("starting the MCP server");
  return connect(std::make_unique<StdioChannel>(*id, std::move(*stream)),
                 "the task's MCP server did not start (" + (l.command.empty() ? std::string() : l.command.front()) + ")",
                 deadline);
}

Result<std::unique_ptr<McpSession>> McpSession::connect(std::unique_ptr<McpChannel> channel, const std::string& what,
                                                        Deadline deadline) {
  std::unique_ptr<McpSession> s(new McpSession(std::move(channel)));
  const std::string params = R"({"protocolVersion":")" + std::string(s->channel_->protocol_version()) +
                             R"(","capabilities":{},"clientInfo":{"name":"forgectl","version":"0.1.0"}})";
  auto init = s->request("initialize", params, deadline);
  if (!init) {
    // A server that exits or answers an error before its handshake does the same on every try: the
    // task's fault (a setup error), not the sandbox's. A slow one (kTimeout) may just be slow.
    Error e = init.error();
    if (e.code != Errc::kTimeout && e.code != Errc::kCancelled) e.code = Errc::kUnsupported;
    return fail(e.with_context(what));
  }
  const auto* result = json::get_object(*init, "result");
  const std::string version = result ? json::get_string(*result, "protocolVersion") : std::string();
  s->channel_->initialized(version.empty() ? s->channel_->protocol_version() : std::string_view(version));
  if (auto st = s->channel_->send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", deadline); !st)
    return st.fail_with(what);
  return s;
}

std::string McpSession::stderr_text() const {
  std::lock_guard lock(mu_);
  return channel_->diagnostics();
}

Result<json::Document> McpSession::request(const std::string& method, const std::string& params_json, Deadline deadline) {
  long id = next_id_++;
  std::string message =
      R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + method + R"(","params":)" + params_json + "}";
  if (auto st = channel_->send(message, deadline); !st) return st.fail();
  for (int seen = 0;; ++seen) {
    if (seen >= limits::kMaxMcpMessagesPerReply)
      return fail(Errc::kProtocol, "the MCP server sent " + std::to_string(seen) + " messages without answering " + method);
    auto text = channel_->receive(deadline);
    if (!text) return text.fail();
    json::Document doc;
    if (json::parse_document(doc, *text) || !doc.IsObject())
      continue;  // servers may log to stdout; skip what is not JSON-RPC
    auto idv = doc.FindMember("id");
    if (idv == doc.MemberEnd() || !idv->value.IsInt64() || idv->value.GetInt64() != id) continue;  // notifications
    if (doc.HasMember("method")) continue;  // the server's own request that happens to reuse the id
    if (auto* err = json::get_object(doc, "error"))
      return fail(Errc::kServer, "MCP error " + std::to_string(json::get_int(*err, "code")) + ": " + json::get_string(*err, "message"));
    return doc;
  }
}

Result<std::vector<ToolSpec>> McpSession::list_tools(Deadline deadline) {
  std::lock_guard lock(mu_);
  auto doc = request("tools/list", "{}", deadline);
  if (!doc) return doc.fail_with("MCP tools/list");
  std::vector<ToolSpec> out;
  const auto* result = json::get_object(*doc, "result");
  const auto* tools = result ? json::get_array(*result, "tools") : nullptr;
  if (!tools) return fail(Errc::kProtocol, "MCP tools/list: no 'tools' in the result");
  for (const auto& t : tools->GetArray()) {
    ToolSpec s{json::get_string(t, "name"), json::get_string(t, "description"), "{}"};
    if (auto* schema = json::get_object(t, "inputSchema")) s.parameters = json::to_string(*schema);
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::string> McpSession::call_tool(const std::string& name, const json::Value& arguments, Deadline deadline) {
  std::lock_guard lock(mu_);
  json::Writer w;
  w.begin_object().field("name", name).key("arguments").raw_value(json::to_string(arguments)).end_object();
  auto doc = request("tools/call", w.take(), deadline);
  if (!doc) return doc.fail();
  const auto* result = json::get_object(*doc, "result");
  if (!result) return fail(Errc::kProtocol, "MCP tools/call: no result");
  std::string text;
  if (auto* content = json::get_array(*result, "content"))
    for (const auto& c : content->GetArray())
      if (json::get_string(c, "type") == "text") text += (text.empty() ? "" : "\n") + json::get_string(c, "text");
  if (json::get_bool(*result, "isError")) return fail(Errc::kServer, text.empty() ? "the tool reported an error" : text);
  return text;
}

// MCP servers often leave additionalProperties unset; forgectl governs their tools as strictly as
// its own, so an object schema without it gets `false` (and an empty schema becomes one).
static std::string strict_schema(const std::string& schema) {
  json::Document doc;
  if (json::parse_document(doc, schema) || !doc.IsObject()) return schema;  // registration will say what is wrong
  auto& a = doc.GetAllocator();
  if (!doc.HasMember("type")) doc.AddMember("type", "object", a);
  if (!doc.HasMember("properties")) doc.AddMember("properties", json::Value(rapidjson::kObjectType), a);
  if (!doc.HasMember("additionalProperties")) doc.AddMember("additionalProperties", false, a);
  return json::to_string(doc);
}

std::vector<std::shared_ptr<Tool>> mcp_tools(std::shared_ptr<McpSession> session, const std::vector<ToolSpec>& specs) {
  class McpTool : public Tool {
   public:
    McpTool(std::shared_ptr<McpSession> s, ToolSpec spec) : s_(std::move(s)), spec_(std::move(spec)) {}
    const ToolSpec& spec() const override { return spec_; }
    Result<std::string> call(const json::Value& args, const CallContext& ctx) override {
      return s_->call_tool(spec_.name, args, ctx.deadline);
    }

   private:
    std::shared_ptr<McpSession> s_;
    ToolSpec spec_;
  };
  std::vector<std::shared_ptr<Tool>> out;
  for (auto s : specs) {
    s.parameters = strict_schema(s.parameters);
    out.push_back(std::make_shared<McpTool>(session, s));
  }
  return out;
}

Result<std::vector<ToolSpec>> load_tool_fixture(const std::string& path) {
  auto text = manifest::read_text(path, limits::kMaxJsonBytes);
  if (!text) return text.fail();
  return parse_tool_fixture(*text, path);
}

Result<std::vector<ToolSpec>> parse_tool_fixture(std::string_view text, const std::string& path) {
  auto doc = json::parse(text, path);
  if (!doc) return doc.fail();
  if (!doc->IsArray()) return fail(Errc::kInvalid, path + ": expected a list of {name, description, parameters}");
  std::vector<ToolSpec> out;
  for (const auto& t : doc->GetArray()) {
    ToolSpec s{json::get_string(t, "name"), json::get_string(t, "description"), "{}"};
    if (s.name.empty()) return fail(Errc::kInvalid, path + ": a tool without a name");
    if (auto* p = json::get_object(t, "parameters")) s.parameters = json::to_string(*p);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace forge::tools
