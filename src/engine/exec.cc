// Exec endpoints and exec_run.
#include "engine/exec.h"

#include <thread>

#include "core/strings.h"
#include "engine/errors.h"
#include "engine/host_kill.h"
#include "engine/stdcopy.h"

namespace forge::engine {

std::string exec_create_body(const ExecCreateSpec& s) {
  json::Writer w;
  w.begin_object()
      .field("AttachStdin", s.attach_stdin)
      .field("AttachStdout", true)
      .field("AttachStderr", true)
      .field("Tty", false)
      .field("Cmd", s.cmd)
      .field("Env", s.env);
  if (!s.user.empty()) w.field("User", s.user);
  if (!s.workdir.empty()) w.field("WorkingDir", s.workdir);
  w.end_object();
  return w.take();
}

std::vector<std::string> helper_as_args(std::string_view user) {
  auto colon = user.find(':');
  if (colon == std::string_view::npos) return {};
  auto numeric = [](std::string_view s) {
    return !s.empty() && s.size() <= 10 && s.find_first_not_of("0123456789") == std::string_view::npos &&
           s.find_first_not_of('0') != std::string_view::npos;  // digits, and not 0
  };
  if (!numeric(user.substr(0, colon)) || !numeric(user.substr(colon + 1))) return {};
  return {"--as", std::string(user)};
}

Result<std::string> exec_create(Client& c, std::string_view container, const ExecCreateSpec& spec) {
  auto resp = c.expect({201}, Method::kPost, "/containers/" + url_encode(container) + "/exec", exec_create_body(spec));
  if (!resp) return resp.fail_with("creating exec in container '" + std::string(container) + "'");
  auto doc = json::parse(resp->body, "exec create response");
  if (!doc) return doc.fail();
  return json::get_string(*doc, "Id");
}

Result<std::unique_ptr<Stream>> exec_start(Client& c, std::string_view exec_id) {
  Request req{Method::kPost, c.versioned("/exec/" + std::string(exec_id) + "/start"), R"({"Detach":false,"Tty":false})",
              "application/json", Millis(30000)};
  auto s = c.transport().hijack(req);
  if (!s) return s.fail_with("starting exec " + std::string(exec_id).substr(0, 12));
  return s;
}

Result<ExecInspect> exec_inspect(Client& c, std::string_view exec_id) {
  auto doc = c.get_json("/exec/" + std::string(exec_id) + "/json");
  if (!doc) return doc.fail_with("inspecting exec " + std::string(exec_id).substr(0, 12));
  ExecInspect i;
  i.running = json::get_bool(*doc, "Running");
  if (!json::has_null(*doc, "ExitCode")) i.exit_code = static_cast<int>(json::get_int(*doc, "ExitCode"));
  i.pid = static_cast<int>(json::get_int(*doc, "Pid"));
  i.container_id = json::get_string(*doc, "ContainerID");
  return i;
}

namespace {

enum class PumpEnd { kEof, kDeadline };

// Moves bytes until the daemon closes the stream or the deadline passes: output into the
// demuxer, pending stdin out (interleaved, so a process that echoes its input cannot deadlock us).
struct Pump {
  Stream& stream;
  StdcopyDemuxer demux;
  StdcopyDemuxer::Sink sink;
  std::string_view stdin_left;
  bool stdin_done = true;

  const std::atomic<int>* cancel = nullptr;

  Result<PumpEnd> run(Deadline deadline) {
    char buf[64 * 1024];
    for (;;) {
      for (;;) {
        auto r = stream.read_some(buf);
        if (!r) return r.fail();
        if (r->eof) return PumpEnd::kEof;
        if (r->would_block) break;
        if (auto st = demux.feed(std::string_view(buf, r->bytes), sink); !st) return st.fail();
      }
      while (!stdin_done && !stdin_left.empty()) {
        auto w = stream.write_some(stdin_left.substr(0, 64 * 1024));
        if (!w) {  // the process stopped reading (exited); its output still counts
          stdin_left = {};
          break;
        }
        if (w->would_block) break;
        stdin_left.remove_prefix(w->bytes);
      }
      if (!stdin_done && stdin_left.empty()) {
        (void)stream.close_write();
        stdin_done = true;
      }
      if (deadline.expired() || (cancel && cancel->load() != 0)) return PumpEnd::kDeadline;
      // Watching for a cancel: wake up every 200 ms to look.
      Deadline slice = cancel ? Deadline::in(Millis(200)) : deadline;
      if (cancel && deadline.remaining() < Millis(200)) slice = deadline;
      auto ready = stream.wait(!stdin_done, slice);
      if (!ready) return ready.fail();
      // Nothing ready: the slice or the deadline passed (the top of the loop tells which).
      if (!*ready && deadline.expired()) return PumpEnd::kDeadline;
    }
  }
};

}  // namespace

Result<ExecResult> exec_run(Client& c, std::string_view container, const ExecOptions& o) {
  auto start = Clock::now();
  std::string what = "running '" + (o.cmd.empty() ? std::string() : o.cmd.front()) + "' in container '" +
                     std::string(container) + "'";
  if (o.cmd.empty()) return fail(Errc::kInvalid, what + ": empty command");

  std::string token = o.helper.empty() ? std::string() : random_hex(8);
  ExecCreateSpec spec{o.cmd, o.env, o.user, o.workdir, o.stdin_data.has_value()};
  if (!o.helper.empty()) {
    std::vector<std::string> wrapped{o.helper};
    for (auto& a : helper_as_args(o.user)) wrapped.push_back(std::move(a));
    if (o.timeout.count() > 0) wrapped.insert(wrapped.end(), {"--timeout-ms", std::to_string(o.timeout.count())});
    wrapped.insert(wrapped.end(), {"--token", token, "--"});
    wrapped.insert(wrapped.end(), o.cmd.begin(), o.cmd.end());
    spec.cmd = std::move(wrapped);
  }
  auto id = exec_create(c, container, spec);
  if (!id) return id.fail_with(what);
  auto stream = exec_start(c, *id);
  if (!stream) return stream.fail_with(what);

  ExecResult res;
  std::string system_msg;
  auto sink = [&](StdStream s, std::string_view data) {
    if (s == StdStream::kSystem) {
      system_msg.append(data);
      return;
    }
    bool is_err = s == StdStream::kStderr;
    std::string& buf = is_err ? res.err : res.out;
    std::size_t room = o.output_cap > buf.size() ? o.output_cap - buf.size() : 0;
    if (data.size() > room) (is_err ? res.err_truncated : res.out_truncated) = true;
    buf.append(data.substr(0, room));
  };
  Pump pump{**stream,
            {},
            sink,
            o.stdin_data ? std::string_view(*o.stdin_data) : std::string_view{},
            !o.stdin_data.has_value(),
            o.cancel};

  // With the helper inside, it enforces the deadline; ours is the fallback, a little later.
  Deadline deadline = o.timeout.count() > 0
                          ? Deadline(start + o.timeout + (o.helper.empty() ? Millis(0) : Millis(2000)))
                          : Deadline::never();
  auto end = pump.run(deadline);
  if (!end) return end.fail_with(what);

  if (*end == PumpEnd::kDeadline) {
    res.timed_out = true;
    res.cancelled = o.cancel && o.cancel->load() != 0;
    pump.cancel = nullptr;  // the kill below runs to its own end
    auto ins = exec_inspect(c, *id);
    if (ins && c.transport().is_local() && kill_host_session(ins->pid, ins->container_id) > 0)
      res.kill_method = "host-session";
    if (!res.kill_method.empty()) end = pump.run(Deadline::in(Millis(1000)));
    if ((!end || *end == PumpEnd::kDeadline) && !o.helper.empty()) {
      // As the command's user: root with CapDrop ALL can neither see nor signal another uid.
      ExecOptions killer{{o.helper, "--kill-token", token}, {}, o.user, {}, std::nullopt, Millis(5000), 4096, {}};
      for (auto& a : helper_as_args(o.user)) killer.cmd.push_back(std::move(a));
      if (auto k = exec_run(c, container, killer); k && k->exit_code == 0) res.kill_method = "helper-token";
      end = pump.run(Deadline::in(Millis(2500)));
    }
  }

  // The exit code is set once the stream has ended; allow the daemon a moment to record it.
  ExecInspect ins;
  for (int i = 0; i < 50; ++i) {
    auto r = exec_inspect(c, *id);
    if (!r) return r.fail_with(what);
    ins = *r;
    if (!ins.running || res.timed_out) break;
    std::this_thread::sleep_for(Millis(10));
  }
  res.exit_code = ins.exit_code.value_or(-1);
  res.elapsed = elapsed_since(start);
  if (!o.helper.empty() && res.exit_code == kHelperTimeoutExit && o.timeout.count() > 0 && res.elapsed >= o.timeout) {
    res.timed_out = true;
    res.kill_method = "helper";
    // The helper's own note is not the command's output.
    if (auto pos = res.err.rfind("forgectl-exec: timed out"); pos != std::string::npos) res.err.erase(pos);
  }
  if (!system_msg.empty()) res.err += system_msg;

  // The runtime reports a command that could not start as exit 126/127 with its message on stdout.
  if ((res.exit_code == 126 || res.exit_code == 127) && starts_with(res.out, "OCI runtime exec failed"))
    return fail(Errc::kInvalid, what + ": " + trim(res.out));
  if (res.exit_code == 126 && starts_with(res.out, "unable to find user"))
    return fail(Errc::kInvalid, what + ": " + trim(res.out));
  return res;
}

}  // namespace forge::engine
