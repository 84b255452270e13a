// HelperChannel: framing over the exec stream, loss detection, kill and restart.
#include "tools/helper_channel.h"

#include "core/strings.h"
#include "engine/host_kill.h"
#include "engine/stdcopy.h"

namespace forge::tools {

namespace {

constexpr std::size_t kMaxDiagnostics = 8192;
constexpr std::uint32_t kMaxFrame = 64u << 20;  // the helper's own limit
constexpr Millis kStartTimeout{15000};
constexpr Millis kKillTimeout{5000};

std::string be32(std::size_t n) {
  return {static_cast<char>(n >> 24 & 255), static_cast<char>(n >> 16 & 255), static_cast<char>(n >> 8 & 255),
          static_cast<char>(n & 255)};
}

// `{"op":…}` → length prefix + `{"id":N,"op":…}`; empty when `body` is not a JSON object's text.
std::string frame(std::uint64_t id, std::string_view body) {
  std::string t = trim(body);
  if (t.size() < 2 || t.front() != '{' || t.back() != '}') return {};
  std::string inner = trim(std::string_view(t).substr(1, t.size() - 2));
  std::string json = "{\"id\":" + std::to_string(id) + (inner.empty() ? "" : "," + inner) + "}";
  return be32(json.size()) + json;
}

// Printable start of bytes that were not a frame (the runtime's "OCI runtime exec failed …").
std::string printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 300)) out += (c >= 32 && c < 127) ? c : ' ';
  return trim(out);
}

}  // namespace

Errc errc_from_helper_code(std::string_view code) {
  if (code == "not_found") return Errc::kNotFound;
  if (code == "forbidden") return Errc::kForbidden;
  if (code == "invalid") return Errc::kInvalid;
  if (code == "io") return Errc::kIo;
  if (code == "timeout") return Errc::kTimeout;
  return Errc::kProtocol;
}

struct HelperChannel::Session {
  std::string exec_id;
  std::string token;  // on the helper's command line (--token), for --kill-token when the daemon is remote
  std::unique_ptr<engine::Stream> stream;
  engine::StdcopyDemuxer demux;
  std::string inbox;  // stdout bytes not yet taken as response frames
  bool answered = false;
};

HelperChannel::HelperChannel(engine::Client& client, HelperChannelSpec spec)
    : client_(client), spec_(std::move(spec)) {}

HelperChannel::~HelperChannel() {
  std::lock_guard lock(mu_);
  if (session_) (void)session_->stream->close_write();  // stdin EOF: the helper exits when idle
}

int HelperChannel::starts() const {
  std::lock_guard lock(mu_);
  return starts_;
}

std::string HelperChannel::diagnostics() const {
  std::lock_guard lock(mu_);
  return diagnostics_;
}

std::string HelperChannel::what() const { return "container '" + spec_.container + "'"; }

Result<json::Document> HelperChannel::call(std::string_view body, Deadline deadline) {
  std::lock_guard lock(mu_);
  if (frame(0, body).empty()) return fail(Errc::kInvalid, "a helper request must be a JSON object");
  // Died between calls (the agent killed it): nothing was sent yet, so start afresh silently.
  if (session_ && !still_alive_locked()) kill_locked();
  if (!session_)
    if (auto st = start_locked(deadline); !st)
      return st.fail_with("starting the tool helper " + spec_.helper + " in " + what());
  auto doc = exchange_locked(next_id_++, body, deadline);
  if (!doc) {
    const Error& e = doc.error();
    if (e.code == Errc::kUnavailable)
      return fail(Errc::kUnavailable,
                  "the tool helper in " + what() + " was lost (" + e.message + "); it is restarted on the next call");
    if (e.code == Errc::kTimeout)
      return fail(Errc::kTimeout, "no response from the tool helper in " + what() +
                                      " by the deadline; it was killed and is restarted on the next call");
    return doc.fail_with("calling the tool helper in " + what());
  }
  if (!json::get_bool(*doc, "ok"))
    return fail(errc_from_helper_code(json::get_string(*doc, "code")), json::get_string(*doc, "message"));
  return doc;
}

Status HelperChannel::start_locked(Deadline deadline) {
  ++starts_;
  auto s = std::make_unique<Session>();
  s->token = random_hex(8);
  // The token on the command line: the helper is non-dumpable, so its environment is unreadable
  // to --kill-token; `--as` makes it verify the agent's uid holds nothing before it serves.
  std::vector<std::string> cmd{spec_.helper, "--serve", "--root", spec_.workspace, "--token", s->token};
  for (auto& a : engine::helper_as_args(spec_.user)) cmd.push_back(std::move(a));
  engine::ExecCreateSpec es{std::move(cmd), {}, spec_.user, {}, true};
  auto id = engine::exec_create(client_, spec_.container, es);
  if (!id) return id.fail();
  auto stream = engine::exec_start(client_, *id);
  if (!stream) return stream.fail();
  s->exec_id = *id;
  s->stream = std::move(*stream);
  session_ = std::move(s);
  // A ping proves the helper runs and can open its workspace before a real request is risked.
  auto pong = exchange_locked(next_id_++, R"({"op":"ping"})", deadline.earlier(Deadline::in(kStartTimeout)));
  if (!pong) return pong.fail();
  if (!json::get_bool(*pong, "ok")) {
    kill_locked();
    return fail(Errc::kUnsupported, "the helper refused a ping: " + json::get_string(*pong, "message"));
  }
  return {};
}

void HelperChannel::pump_locked(std::string_view bytes) {
  Session& s = *session_;
  auto st = s.demux.feed(bytes, [&](engine::StdStream which, std::string_view data) {
    if (which == engine::StdStream::kStdout) {
      s.inbox.append(data);
      return;
    }
    diagnostics_.append(data);
    if (diagnostics_.size() > kMaxDiagnostics) diagnostics_.erase(0, diagnostics_.size() - kMaxDiagnostics);
  });
  if (!st) s.inbox.append("\xff\xff\xff\xff");  // an impossible frame length: reported as a protocol error
}

bool HelperChannel::still_alive_locked() {
  char buf[4096];
  for (;;) {
    auto r = session_->stream->read_some(buf);
    if (!r || r->eof) return false;
    if (r->would_block) return true;
    pump_locked(std::string_view(buf, r->bytes));
  }
}

Result<json::Document> HelperChannel::exchange_locked(std::uint64_t id, std::string_view body, Deadline deadline) {
  Session& s = *session_;
  const std::string out = frame(id, body);
  std::string_view pending = out;
  const Deadline hard = deadline.is_never() ? deadline : Deadline(deadline.at() + kGrace);
  auto lost = [&](std::string why) -> Result<json::Document> {
    const bool started = s.answered;
    std::string garbage = s.inbox.empty() ? "" : ": " + printable(s.inbox);
    if (auto ins = engine::exec_inspect(client_, s.exec_id); ins && ins->exit_code)
      why += " (exit code " + std::to_string(*ins->exit_code) + ")";
    std::string diag = trim(diagnostics_);
    if (!diag.empty()) why += "; its stderr: " + printable(diag.substr(diag.size() > 300 ? diag.size() - 300 : 0));
    kill_locked();  // cleans up what it left running in its session
    if (started) return fail(Errc::kUnavailable, why + garbage);
    // The first helper of this channel never answered its ping: nothing the agent sent has reached
    // the sandbox yet, so the sandbox itself cannot run tools (a privilege drop the runtime
    // refuses, a missing or unexecutable helper). Later ones may have been broken by the agent.
    if (starts_ == 1) return fail(Errc::kBroken, "the sandbox cannot run its tool helper: " + why + garbage);
    // A helper that never answered did not start (missing binary, unusable workspace): retrying cannot help.
    return fail(Errc::kUnsupported, why + garbage);
  };
  char buf[64 * 1024];
  for (;;) {
    while (!pending.empty()) {
      auto w = s.stream->write_some(pending);
      if (!w) return lost("writing the request failed: " + w.error().message);
      if (w->would_block) break;
      pending.remove_prefix(w->bytes);
    }
    bool eof = false;
    for (;;) {
      auto r = s.stream->read_some(buf);
      if (!r) return lost(r.error().message);
      if (r->eof) eof = true;
      if (r->eof || r->would_block) break;
      pump_locked(std::string_view(buf, r->bytes));
    }
    while (s.inbox.size() >= 4) {
      const auto* p = reinterpret_cast<const unsigned char*>(s.inbox.data());
      const std::uint32_t len = std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
      if (len > kMaxFrame) {
        if (eof) return lost("the helper ended");
        std::string text = printable(s.inbox);
        kill_locked();
        return fail(Errc::kProtocol, "the helper wrote something that is not a response: " + text);
      }
      if (s.inbox.size() < 4 + std::size_t{len}) break;
      std::string payload = s.inbox.substr(4, len);
      s.inbox.erase(0, 4 + std::size_t{len});
      auto doc = json::parse(payload, "the tool helper's response");
      if (!doc) {
        kill_locked();
        return doc.fail();
      }
      s.answered = true;
      if (json::get_int(*doc, "id", -1) != static_cast<std::int64_t>(id)) continue;  // a stale answer
      return doc;
    }
    if (eof) return lost("its output closed");
    if (hard.expired()) {
      kill_locked();
      return fail(Errc::kTimeout, "no response by the deadline");
    }
    auto ready = s.stream->wait(!pending.empty(), hard);
    if (!ready) return lost(ready.error().message);
  }
}

void HelperChannel::kill_locked() {
  if (!session_) return;
  bool killed = false;
  auto ins = engine::exec_inspect(client_, session_->exec_id);
  // Every exec leads its own session, so this also takes the commands the helper was running.
  if (ins && client_.transport().is_local()) killed = engine::kill_host_session(ins->pid, ins->container_id) > 0;
  if (!killed && ins && ins->running) {
    // As the helper's own user: only that uid may signal it and the commands it runs.
    engine::ExecOptions killer{{spec_.helper, "--kill-token", session_->token}};
    for (auto& a : engine::helper_as_args(spec_.user)) killer.cmd.push_back(std::move(a));
    killer.user = spec_.user;
    killer.timeout = kKillTimeout;
    (void)engine::exec_run(client_, spec_.container, killer);
  }
  session_.reset();
}

}  // namespace forge::tools
