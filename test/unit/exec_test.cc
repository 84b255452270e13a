// exec_run against scripted exec streams, plus the stream parsers (events, build/pull progress) and path stat.
#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/json.h"
#include "core/strings.h"
#include "engine/archive.h"
#include "engine/exec.h"
#include "engine/images.h"
#include "engine/stdcopy.h"
#include "engine/system.h"
#include "support/fake_transport.h"

using namespace forge;
using namespace forge::engine;
using forge::test::FakeStreamScript;
using forge::test::FakeTransport;

namespace {

constexpr const char* kExited3 = R"({"Running":false,"ExitCode":3,"Pid":123,"ContainerID":"abc"})";

struct Fx {
  std::shared_ptr<FakeTransport> fake = std::make_shared<FakeTransport>();
  Client c{fake};
  Fx() { fake->on(Method::kPost, "/containers/abc/exec", 201, R"({"Id":"e1"})"); }
  std::vector<std::string> sent_cmd() {
    auto creates = fake->sent("/containers/abc/exec");
    REQUIRE(!creates.empty());
    auto doc = json::parse(creates.front().body, "exec create");
    REQUIRE(doc);
    return json::get_strings(*doc, "Cmd");
  }
};

// Splits `s` into chunks of the given sizes (the rest goes last).
std::deque<std::string> split(const std::string& s, std::vector<std::size_t> sizes) {
  std::deque<std::string> out;
  std::size_t pos = 0;
  for (auto n : sizes) {
    out.push_back(s.substr(pos, n));
    pos += n;
  }
  if (pos < s.size()) out.push_back(s.substr(pos));
  return out;
}

// A daemon-side `cat`: no output until stdin is half-closed, then its input as one stdout frame, then EOF.
class CatStream final : public Stream {
 public:
  explicit CatStream(std::shared_ptr<FakeStreamScript> s) : s_(std::move(s)) {}
  Result<IoStep> read_some(std::span<char> buf) override {
    if (s_->chunks.empty() && s_->write_closed && !echoed_) {
      s_->chunks.push_back(stdcopy_frame(StdStream::kStdout, s_->written));
      echoed_ = true;
    }
    if (s_->chunks.empty()) return IoStep{0, !echoed_, echoed_};
    auto& front = s_->chunks.front();
    std::size_t n = std::min(buf.size(), front.size());
    std::copy_n(front.data(), n, buf.data());
    front.erase(0, n);
    if (front.empty()) s_->chunks.pop_front();
    return IoStep{n, false, false};
  }
  Result<IoStep> write_some(std::string_view data) override {
    if (s_->write_closed) return fail(Errc::kIo, "write after half-close");
    s_->written.append(data);
    return IoStep{data.size(), false, false};
  }
  Status close_write() override {
    s_->write_closed = true;
    return {};
  }
  Result<bool> wait(bool, Deadline deadline) override {
    std::this_thread::sleep_for(std::min(deadline.remaining(), Millis(1)));
    return !deadline.expired();
  }

 private:
  std::shared_ptr<FakeStreamScript> s_;
  bool echoed_ = false;
};

// The fake for plain calls; hijacks get a CatStream.
class CatTransport final : public Transport {
 public:
  std::shared_ptr<FakeTransport> fake = std::make_shared<FakeTransport>();
  std::shared_ptr<FakeStreamScript> script = std::make_shared<FakeStreamScript>();
  Result<Response> send(const Request& r) override { return fake->send(r); }
  Result<Response> stream(const Request& r, const ChunkSink& s) override { return fake->stream(r, s); }
  Result<std::unique_ptr<Stream>> hijack(const Request& r) override {
    fake->requests.push_back(r);
    return std::unique_ptr<Stream>(std::make_unique<CatStream>(script));
  }
  std::string describe() const override { return "fake-cat://"; }
  bool is_local() const override { return false; }
};

}  // namespace

TEST_CASE("exec_run: the command is sent, split frames are demuxed, the exit code comes from inspect") {
  Fx f;
  auto script = f.fake->on_hijack("/exec/e1/start");
  std::string wire = stdcopy_frame(StdStream::kStdout, "hello\n") + stdcopy_frame(StdStream::kStderr, "warn: slow disk\n") +
                     stdcopy_frame(StdStream::kStdout, "bye\n");
  script->chunks = split(wire, {3, 10, 1, 7, 12});
  f.fake->on(Method::kGet, "/exec/e1/json", 200, kExited3);

  ExecOptions o;
  o.cmd = {"sh", "-c", "echo hello; echo 'warn: slow disk' >&2; echo bye; exit 3"};
  auto r = exec_run(f.c, "abc", o);
  REQUIRE(r);
  CHECK(r->out == "hello\nbye\n");
  CHECK(r->err == "warn: slow disk\n");
  CHECK(r->exit_code == 3);
  CHECK_FALSE(r->timed_out);
  CHECK_FALSE(r->out_truncated);
  CHECK(f.sent_cmd() == o.cmd);
  auto doc = json::parse(f.fake->sent("/containers/abc/exec").front().body, "exec create");
  REQUIRE(doc);
  CHECK_FALSE(json::get_bool(*doc, "AttachStdin", true));
  CHECK_FALSE(json::get_bool(*doc, "Tty", true));
}

TEST_CASE("exec_run with the helper wraps the command with a deadline and a kill token") {
  Fx f;
  f.fake->on_hijack("/exec/e1/start");
  f.fake->on(Method::kGet, "/exec/e1/json", 200, R"({"Running":false,"ExitCode":0,"Pid":123,"ContainerID":"abc"})");
  ExecOptions o;
  o.cmd = {"make", "-j2", "test"};
  o.timeout = Millis(5000);
  o.helper = kExecHelperPath;
  auto r = exec_run(f.c, "abc", o);
  REQUIRE(r);
  CHECK(r->exit_code == 0);
  auto cmd = f.sent_cmd();
  REQUIRE(cmd.size() == 9);
  CHECK(cmd[0] == "/.forgectl/exec");
  CHECK(cmd[1] == "--timeout-ms");
  CHECK(cmd[2] == "5000");
  CHECK(cmd[3] == "--token");
  const std::string& token = cmd[4];
  CHECK(token.size() >= 16);
  CHECK(token.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(cmd[5] == "--");
  CHECK(std::vector<std::string>(cmd.begin() + 6, cmd.end()) == o.cmd);
}

TEST_CASE("exec_run writes stdin and half-closes it, so a reader like cat can finish") {
  auto t = std::make_shared<CatTransport>();
  t->fake->on(Method::kPost, "/containers/abc/exec", 201, R"({"Id":"e1"})");
  t->fake->on(Method::kGet, "/exec/e1/json", 200, R"({"Running":false,"ExitCode":0,"Pid":123,"ContainerID":"abc"})");
  Client c(t);
  ExecOptions o;
  o.cmd = {"cat"};
  o.stdin_data = std::string("line one\nline two\n") + std::string(100000, 'z');
  o.timeout = Millis(3000);  // bounds the test if stdin is never closed
  auto r = exec_run(c, "abc", o);
  REQUIRE(r);
  CHECK_FALSE(r->timed_out);
  CHECK(t->script->written == *o.stdin_data);
  CHECK(t->script->write_closed);
  CHECK(r->out == *o.stdin_data);
  auto doc = json::parse(t->fake->requests.front().body, "exec create");
  REQUIRE(doc);
  CHECK(json::get_bool(*doc, "AttachStdin"));
}

TEST_CASE("exec_run caps output per stream, marks it truncated and still reads to the end") {
  Fx f;
  auto script = f.fake->on_hijack("/exec/e1/start");
  script->chunks = {stdcopy_frame(StdStream::kStdout, "0123456789"), stdcopy_frame(StdStream::kStderr, "e"),
                    stdcopy_frame(StdStream::kStdout, "abcdef")};
  f.fake->on(Method::kGet, "/exec/e1/json", 200, kExited3);
  ExecOptions o;
  o.cmd = {"yes"};
  o.output_cap = 8;
  auto r = exec_run(f.c, "abc", o);
  REQUIRE(r);
  CHECK(r->out == "01234567");
  CHECK(r->out_truncated);
  CHECK(r->err == "e");
  CHECK_FALSE(r->err_truncated);
  CHECK(r->exit_code == 3);
  CHECK(script->chunks.empty());
}

TEST_CASE("a command that cannot start (OCI runtime exec failed, exit 126) is an error, not a result") {
  Fx f;
  auto script = f.fake->on_hijack("/exec/e1/start");
  script->chunks = {stdcopy_frame(StdStream::kStdout,
                                  "OCI runtime exec failed: exec failed: unable to start container process: exec: "
                                  "\"nope\": executable file not found in $PATH: unknown\r\n")};
  f.fake->on(Method::kGet, "/exec/e1/json", 200, R"({"Running":false,"ExitCode":126,"Pid":0,"ContainerID":"abc"})");
  ExecOptions o;
  o.cmd = {"nope"};
  auto r = exec_run(f.c, "abc", o);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::kInvalid);
  CHECK(r.error().what().find("executable file not found") != std::string::npos);
  CHECK(r.error().what().find("nope") != std::string::npos);
}

TEST_CASE("a plain exit 126 with other output is a result") {
  Fx f;
  auto script = f.fake->on_hijack("/exec/e1/start");
  script->chunks = {stdcopy_frame(StdStream::kStdout, "permission denied\n")};
  f.fake->on(Method::kGet, "/exec/e1/json", 200, R"({"Running":false,"ExitCode":126,"Pid":7,"ContainerID":"abc"})");
  auto r = exec_run(f.c, "abc", ExecOptions{.cmd = {"./script.sh"}});
  REQUIRE(r);
  CHECK(r->exit_code == 126);
}

TEST_CASE("exec_run: a hung stream with a 300 ms timeout and no helper returns timed_out promptly") {
  Fx f;
  auto script = f.fake->on_hijack("/exec/e1/start");
  script->chunks = {stdcopy_frame(StdStream::kStdout, "started\n")};
  script->hang = true;
  f.fake->on(Method::kGet, "/exec/e1/json", 200, R"({"Running":true,"ExitCode":null,"Pid":4242,"ContainerID":"abc"})");
  ExecOptions o;
  o.cmd = {"sleep", "3600"};
  o.timeout = Millis(300);
  auto t0 = Clock::now();
  auto r = exec_run(f.c, "abc", o);
  auto wall = elapsed_since(t0);
  REQUIRE(r);
  CHECK(r->timed_out);
  CHECK(r->out == "started\n");
  CHECK(r->exit_code == -1);  // still running as far as the daemon can tell
  CHECK(wall >= Millis(300));
  CHECK(wall < Millis(1500));
  CHECK(r->elapsed < Millis(1500));
}

TEST_CASE("exec_run: an empty command and a stopped container are errors") {
  Fx f;
  auto empty = exec_run(f.c, "abc", ExecOptions{});
  REQUIRE_FALSE(empty);
  CHECK(empty.error().code == Errc::kInvalid);
  CHECK(f.fake->requests.empty());

  auto g = std::make_shared<FakeTransport>();
  g->on(Method::kPost, "/containers/abc/exec", 409, R"({"message":"Container abc is not running"})");
  Client c(g);
  auto r = exec_run(c, "abc", ExecOptions{.cmd = {"true"}});
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::kConflict);
  CHECK(r.error().what().find("is not running") != std::string::npos);
}

TEST_CASE("EventParser: events split anywhere across chunks") {
  const std::string wire =
      "{\"status\":\"start\",\"id\":\"c0ffee\",\"Type\":\"container\",\"Action\":\"start\",\"Actor\":{\"ID\":\"c0ffee\","
      "\"Attributes\":{\"name\":\"demo-web-1\",\"io.forgectl.project\":\"demo\"}},\"scope\":\"local\",\"time\":1700000001,"
      "\"timeNano\":1700000001000000000}\n"
      "{\"Type\":\"container\",\"Action\":\"exec_die\",\"Actor\":{\"ID\":\"c0ffee\",\"Attributes\":{\"execID\":\"e1\","
      "\"exitCode\":\"2\"}},\"timeNano\":1700000002000000000}\n";
  for (std::size_t cut = 0; cut <= wire.size(); cut += 7) {
    CAPTURE(cut);
    EventParser p;
    std::vector<Event> seen;
    auto keep = [&](const Event& e) {
      seen.push_back(e);
      return true;
    };
    REQUIRE(p.feed(wire.substr(0, cut), keep));
    REQUIRE(p.feed(wire.substr(cut), keep));
    REQUIRE(seen.size() == 2);
    CHECK(seen[0].type == "container");
    CHECK(seen[0].action == "start");
    CHECK(seen[0].id == "c0ffee");
    CHECK(seen[0].attributes.at("io.forgectl.project") == "demo");
    CHECK(seen[0].time_nano == 1700000001000000000);
    CHECK(seen[1].action == "exec_die");
    CHECK(seen[1].attributes.at("exitCode") == "2");
  }
}

TEST_CASE("EventParser: a handler can stop the stream; garbage is a protocol error") {
  EventParser p;
  int calls = 0;
  auto r = p.feed("{\"Action\":\"a\"}\n{\"Action\":\"b\"}\n", [&](const Event&) { return ++calls < 1; });
  REQUIRE(r);
  CHECK_FALSE(*r);
  CHECK(calls == 1);
  EventParser bad;
  auto e = bad.feed("not json\n", [](const Event&) { return true; });
  REQUIRE_FALSE(e);
  CHECK(e.error().code == Errc::kProtocol);
}

TEST_CASE("ProgressParser: stream text, aux.ID, and an errorDetail line becoming an error") {
  std::vector<std::string> texts;
  ProgressParser p([&](std::string_view t) { texts.emplace_back(t); });
  std::string wire =
      "{\"stream\":\"Step 1/2 : FROM scratch\\n\"}\n{\"aux\":{\"ID\":\"sha256:9a8b7c\"}}\n"
      "{\"errorDetail\":{\"code\":3,\"message\":\"The command '/bin/sh -c exit 3' returned a non-zero code: 3\"},"
      "\"error\":\"The command '/bin/sh -c exit 3' returned a non-zero code: 3\"}";  // last line without newline
  REQUIRE(p.feed(wire.substr(0, 20)));
  REQUIRE(p.feed(wire.substr(20)));
  CHECK(p.aux_id() == "sha256:9a8b7c");
  CHECK(p.error().empty());  // the error line has not ended yet
  REQUIRE(p.finish());
  CHECK(p.error() == "The command '/bin/sh -c exit 3' returned a non-zero code: 3");
  CHECK(texts == std::vector<std::string>{"Step 1/2 : FROM scratch\n"});
}

TEST_CASE("build_image: an error line inside a 200 stream is a failed build") {
  Fx f;
  f.fake->on(Method::kPost, "/build", 200,
             "{\"stream\":\"Step 1/2 : FROM scratch\\n\"}\n{\"stream\":\"Step 2/2 : RUN exit 3\\n\"}\n"
             "{\"errorDetail\":{\"code\":3,\"message\":\"The command '/bin/sh -c exit 3' returned a non-zero code: 3\"},"
             "\"error\":\"The command '/bin/sh -c exit 3' returned a non-zero code: 3\"}\n");
  BuildSpec s;
  s.context_tar = std::string(1024, '\0');
  s.tags = {"forgectl/runner:0.1"};
  auto id = build_image(f.c, s);
  REQUIRE_FALSE(id);
  CHECK(id.error().what().find("returned a non-zero code: 3") != std::string::npos);
  CHECK(id.error().what().find("forgectl/runner:0.1") != std::string::npos);
  CHECK(f.fake->requests.size() == 1);  // no fallback inspect of a stale tag
}

TEST_CASE("load_images: garbage reported inside a 200 stream is an error") {
  Fx f;
  f.fake->on(Method::kPost, "/images/load", 200,
             "{\"errorDetail\":{\"message\":\"unexpected EOF\"},\"error\":\"unexpected EOF\"}\n");
  auto r = load_images(f.c, "not a tar");
  REQUIRE_FALSE(r);
  CHECK(r.error().what().find("unexpected EOF") != std::string::npos);
}

TEST_CASE("pull_image_by_digest refuses a tag without sending anything") {
  Fx f;
  f.fake->requests.clear();
  for (const char* ref : {"busybox:latest", "busybox", "busybox@sha256:abc", "@sha256:"}) {
    CAPTURE(ref);
    auto r = pull_image_by_digest(f.c, ref);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::kInvalid);
  }
  CHECK(f.fake->requests.empty());
}

TEST_CASE("pull_image_by_digest with no registry reachable is kUnavailable and says so") {
  Fx f;
  f.fake->on(Method::kPost, "/images/create", 500,
             R"({"message":"Get \"https://registry-1.docker.io/v2/\": dial tcp: lookup registry-1.docker.io: no such host"})");
  auto r = pull_image_by_digest(f.c, "busybox@sha256:" + std::string(64, 'b'));
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::kUnavailable);
  CHECK(r.error().what().find("no registry is reachable") != std::string::npos);
  CHECK(r.error().what().find("registry-1.docker.io") != std::string::npos);
  CHECK(f.fake->requests.size() == 1);
}

TEST_CASE("pull_image_by_digest: a daemon failure that is not about the network stays kServer") {
  Fx f;
  f.fake->on(Method::kPost, "/images/create", 500,
             R"({"message":"write /var/lib/docker/tmp/GetImageBlob1: no space left on device"})");
  auto r = pull_image_by_digest(f.c, "busybox@sha256:" + std::string(64, 'c'));
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::kServer);
  CHECK(r.error().what().find("no space left on device") != std::string::npos);
}

// Go's "Client.Timeout exceeded" has neither "dial tcp" nor "lookup", and a capital T.
TEST_CASE("pull_image_by_digest: Go's 'Client.Timeout exceeded' registry failure is kUnavailable") {
  Fx f;
  f.fake->on(Method::kPost, "/images/create", 500,
             R"json({"message":"Get \"https://registry-1.docker.io/v2/\": net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)"})json");
  auto r = pull_image_by_digest(f.c, "busybox@sha256:" + std::string(64, 'c'));
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::kUnavailable);
  CHECK(r.error().what().find("no registry is reachable") != std::string::npos);
}

TEST_CASE("decode_path_stat: base64 JSON; mode bit 31 is a directory") {
  auto dir = decode_path_stat(base64_encode(
      R"({"name":"work","size":4096,"mode":2147484141,"mtime":"2024-03-01T10:00:00Z","linkTarget":""})"));
  REQUIRE(dir);
  CHECK(dir->name == "work");
  CHECK(dir->is_dir());
  CHECK(dir->perm() == 0755);
  auto file = decode_path_stat(
      base64_encode(R"({"name":"hello.txt","size":11,"mode":420,"mtime":"2024-03-01T10:00:00Z","linkTarget":""})"));
  REQUIRE(file);
  CHECK_FALSE(file->is_dir());
  CHECK(file->perm() == 0644);
  CHECK(file->size == 11);
  auto bad = decode_path_stat("!!not base64!!");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == Errc::kProtocol);
}
