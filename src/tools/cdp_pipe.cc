// CdpPipe: NUL-framed DevTools messages over an exec's hijacked stream.
#include "tools/cdp_pipe.h"

#include <algorithm>

#include "engine/exec.h"

namespace forge::tools {

namespace {

constexpr std::size_t kMaxStderr = 8192;

}  // namespace

std::string cdp_command(std::uint64_t id, std::string_view method, std::string_view params_json,
                        std::string_view session_id) {
  json::Writer w;
  w.begin_object().field("id", static_cast<std::int64_t>(id)).field("method", method);
  w.key("params").raw_value(params_json.empty() ? std::string_view("{}") : params_json);
  if (!session_id.empty()) w.field("sessionId", session_id);
  std::string out = w.end_object().take();
  out.push_back('\0');
  return out;
}

Result<std::vector<std::string>> CdpSplitter::feed(std::string_view bytes) {
  std::vector<std::string> out;
  for (;;) {
    auto nul = bytes.find('\0');
    if (nul == std::string_view::npos) break;
    partial_.append(bytes.substr(0, nul));
    out.push_back(std::move(partial_));
    partial_.clear();
    bytes.remove_prefix(nul + 1);
  }
  partial_.append(bytes);
  if (partial_.size() > kMaxMessage)
    return fail(Errc::kProtocol, "the browser sent a message over " + std::to_string(kMaxMessage) + " bytes");
  return out;
}

Result<std::unique_ptr<CdpPipe>> CdpPipe::start(engine::Client& c, const std::string& container,
                                                std::vector<std::string> cmd, const std::string& user) {
  engine::ExecCreateSpec spec{std::move(cmd), {}, user, "/tmp", true};
  auto id = engine::exec_create(c, container, spec);
  if (!id) return id.fail_with("starting the browser in container '" + container + "'");
  auto stream = engine::exec_start(c, *id);
  if (!stream) return stream.fail_with("starting the browser in container '" + container + "'");
  return std::unique_ptr<CdpPipe>(new CdpPipe(c, *id, std::move(*stream)));
}

CdpPipe::~CdpPipe() {
  if (stream_) (void)stream_->close_write();
}

Status CdpPipe::take(std::string_view bytes) {
  std::string out;
  auto st = demux_.feed(bytes, [&](engine::StdStream which, std::string_view data) {
    if (which == engine::StdStream::kStdout) {
      out.append(data);
      return;
    }
    stderr_tail_.append(data);
    if (stderr_tail_.size() > kMaxStderr) stderr_tail_.erase(0, stderr_tail_.size() - kMaxStderr);
  });
  if (!st) return st.fail_with("reading the browser's pipe");
  auto messages = splitter_.feed(out);
  if (!messages) return messages.fail();
  for (auto& m : *messages) {
    auto doc = json::parse(m, "a DevTools message", CdpSplitter::kMaxMessage);
    if (!doc) return doc.fail();
    if (doc->IsObject() && doc->HasMember("id") && (*doc)["id"].IsUint64()) {
      replies_.emplace_back((*doc)["id"].GetUint64(), std::move(m));
    } else if (doc->IsObject()) {
      events_.push_back({json::get_string(*doc, "method"), json::get_string(*doc, "sessionId"), std::move(m)});
      if (events_.size() > kMaxQueuedEvents) events_.pop_front();
    }
  }
  return {};
}

Status CdpPipe::pump(Deadline deadline, bool want_write) {
  char buf[64 * 1024];
  bool got = false;
  for (;;) {
    auto r = stream_->read_some(buf);
    if (!r) {
      closed_ = true;
      return fail(Errc::kUnavailable, "the browser's pipe broke: " + r.error().message);
    }
    if (r->eof) {
      closed_ = true;
      return fail(Errc::kUnavailable, "the browser exited");
    }
    if (r->would_block) break;
    got = true;
    if (auto st = take(std::string_view(buf, r->bytes)); !st) return st;
  }
  if (got || deadline.expired()) return {};
  auto ready = stream_->wait(want_write, deadline);
  if (!ready) {
    closed_ = true;
    return fail(Errc::kUnavailable, "the browser's pipe broke: " + ready.error().message);
  }
  return {};
}

Result<json::Document> CdpPipe::call(std::string_view method, std::string_view params, std::string_view session,
                                     Deadline deadline) {
  if (closed_) return fail(Errc::kUnavailable, "the browser is gone");
  const std::uint64_t id = next_id_++;
  const std::string out = cdp_command(id, method, params, session);
  std::string_view pending = out;
  for (;;) {
    while (!pending.empty()) {
      auto w = stream_->write_some(pending);
      if (!w) {
        closed_ = true;
        return fail(Errc::kUnavailable, "writing to the browser failed: " + w.error().message);
      }
      if (w->would_block) break;
      pending.remove_prefix(w->bytes);
    }
    auto it = std::find_if(replies_.begin(), replies_.end(), [id](const auto& r) { return r.first == id; });
    if (it != replies_.end()) {
      std::string text = std::move(it->second);
      replies_.erase(it);
      auto doc = json::parse(text, "a DevTools reply", CdpSplitter::kMaxMessage);
      if (!doc) return doc.fail();
      if (const json::Value* err = json::get_object(*doc, "error"))
        return fail(Errc::kInvalid, std::string(method) + ": " + json::get_string(*err, "message"));
      json::Document result;
      if (const json::Value* r = json::get_object(*doc, "result"))
        json::copy_into(result, *r);
      else
        result.SetObject();
      return result;
    }
    replies_.clear();  // replies to calls that gave up earlier
    if (deadline.expired()) return fail(Errc::kTimeout, std::string(method) + ": no reply from the browser in time");
    if (auto st = pump(deadline, !pending.empty()); !st) return st.fail_with(std::string(method));
  }
}

Result<bool> CdpPipe::wait_event(std::string_view method, std::string_view session, Deadline deadline) {
  for (;;) {
    auto it = std::find_if(events_.begin(), events_.end(),
                           [&](const CdpEvent& e) { return e.method == method && e.session == session; });
    if (it != events_.end()) {
      events_.erase(it);
      return true;
    }
    if (deadline.expired()) return false;
    if (closed_) return fail(Errc::kUnavailable, "the browser is gone");
    if (auto st = pump(deadline, false); !st) return st.fail();
  }
}

}  // namespace forge::tools
