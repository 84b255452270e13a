// The helper's operations on a host temp directory: file ops, confinement to the root, run with
// deadlines that leave no process behind, output caps, grep, and the serve framing.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "core/strings.h"
#include "helper/kill_token.h"
#include "helper/ops.h"
#include "helper/serve.h"
#include "tools/local_sandbox.h"

using namespace forge::helper;
namespace fs = std::filesystem;

namespace {

// A fresh directory under /tmp with the workspace at <dir>/ws, removed at scope exit. Files
// beside ws/ stand for "outside the workspace".
struct TempWorkspace {
  TempWorkspace() {
    char tmpl[] = "/tmp/forgectl-ops-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    base = tmpl;
    fs::create_directory(base + "/ws");
    REQUIRE(Root::open(base + "/ws", &root).ok());
  }
  ~TempWorkspace() {
    std::error_code ec;
    fs::remove_all(base, ec);
  }
  std::string path(const std::string& rel) const { return base + "/ws/" + rel; }
  void put(const std::string& rel, const std::string& text) const {
    fs::create_directories(fs::path(path(rel)).parent_path());
    std::ofstream(path(rel), std::ios::binary) << text;
  }
  std::string base;
  Root root;
};

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Waits up to a second for every process carrying `entry` in its environment to be gone.
bool none_left(const std::string& entry) {
  for (int i = 0; i < 100; ++i) {
    if (env_holders(entry).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

RunOutcome must_run(const Root& r, const RunSpec& spec) {
  RunOutcome o;
  OpStatus st = run(r, spec, &o);
  REQUIRE_MESSAGE(st.ok(), st.message);
  return o;
}

}  // namespace

TEST_CASE("helper ops write, read, list and stat files under the root") {
  TempWorkspace ws;
  REQUIRE(write_file(ws.root, "a/b/c.txt", "hello\n", false).ok());  // parents are created
  CHECK(slurp(ws.path("a/b/c.txt")) == "hello\n");
  REQUIRE(write_file(ws.root, "a/b/c.txt", "more\n", true).ok());
  CHECK(slurp(ws.path("a/b/c.txt")) == "hello\nmore\n");

  Chunk c;
  REQUIRE(read_file(ws.root, "a/b/c.txt", 6, 3, &c).ok());
  CHECK(c.data == "mor");
  CHECK(c.size == 11);
  REQUIRE(read_file(ws.root, "./a//b/c.txt", 100, 10, &c).ok());  // past the end: nothing, not an error
  CHECK(c.data.empty());
  CHECK(read_file(ws.root, "a/nope", 0, 10, &c).code == OpCode::kNotFound);
  CHECK(read_file(ws.root, "a", 0, 10, &c).code == OpCode::kInvalid);

  REQUIRE(make_symlink(ws.root, "b/c.txt", "a/link").ok());
  std::vector<Entry> entries;
  REQUIRE(list_dir(ws.root, "a", &entries).ok());
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].name == "b");
  CHECK(entries[0].kind == EntryKind::kDirectory);
  CHECK(entries[1].name == "link");
  CHECK(entries[1].kind == EntryKind::kSymlink);
  REQUIRE(list_dir(ws.root, "", &entries).ok());
  CHECK(entries.size() == 1);

  Entry e;
  REQUIRE(stat_path(ws.root, "a/link", &e).ok());  // a link inside the root is followed
  CHECK(e.kind == EntryKind::kFile);
  CHECK(e.size == 11);
  CHECK(e.mode == 0644);
  CHECK(stat_path(ws.root, "missing", &e).code == OpCode::kNotFound);
}

TEST_CASE("helper ops move, copy and remove files and directory trees") {
  TempWorkspace ws;
  ws.put("src/one.txt", "1");
  ws.put("src/deep/two.txt", "22");
  REQUIRE(make_symlink(ws.root, "one.txt", "src/ln").ok());

  REQUIRE(copy_path(ws.root, "src", "dst/copied").ok());
  CHECK(slurp(ws.path("dst/copied/one.txt")) == "1");
  CHECK(slurp(ws.path("dst/copied/deep/two.txt")) == "22");
  CHECK(fs::is_symlink(ws.path("dst/copied/ln")));
  CHECK(fs::read_symlink(ws.path("dst/copied/ln")) == "one.txt");
  REQUIRE(copy_path(ws.root, "src/one.txt", "one-copy.txt").ok());
  CHECK(slurp(ws.path("one-copy.txt")) == "1");
  CHECK(copy_path(ws.root, "src", "src/inner").code == OpCode::kInvalid);

  REQUIRE(move_path(ws.root, "one-copy.txt", "moved/here.txt").ok());
  CHECK_FALSE(fs::exists(ws.path("one-copy.txt")));
  CHECK(slurp(ws.path("moved/here.txt")) == "1");

  CHECK(remove_path(ws.root, "dst", false).code == OpCode::kInvalid);  // not empty
  REQUIRE(remove_path(ws.root, "dst", true).ok());
  CHECK_FALSE(fs::exists(ws.path("dst")));
  REQUIRE(remove_path(ws.root, "src/ln", false).ok());  // the link, not its target
  CHECK(fs::exists(ws.path("src/one.txt")));
  CHECK(remove_path(ws.root, "", true).code == OpCode::kInvalid);  // never the root itself
  CHECK(remove_path(ws.root, "gone", false).code == OpCode::kNotFound);
}

TEST_CASE("helper ops refuse symlinks and paths that lead out of the root") {
  TempWorkspace ws;
  std::ofstream(ws.base + "/secret") << "outside";
  fs::create_symlink(ws.base + "/secret", ws.path("abs"));  // absolute target
  fs::create_symlink("../secret", ws.path("rel"));          // relative target climbing out
  fs::create_symlink(ws.base, ws.path("dir"));              // a directory outside

  Chunk c;
  Entry e;
  std::vector<Entry> entries;
  for (const char* p : {"abs", "rel"}) {
    CAPTURE(p);
    CHECK(read_file(ws.root, p, 0, 100, &c).code == OpCode::kForbidden);
    CHECK(write_file(ws.root, p, "overwritten", false).code == OpCode::kForbidden);
    CHECK(stat_path(ws.root, p, &e).code == OpCode::kForbidden);
  }
  CHECK(list_dir(ws.root, "dir", &entries).code == OpCode::kForbidden);
  CHECK(read_file(ws.root, "dir/secret", 0, 100, &c).code == OpCode::kForbidden);
  CHECK(write_file(ws.root, "dir/new", "x", false).code == OpCode::kForbidden);
  CHECK(copy_path(ws.root, "abs", "stolen").code == OpCode::kForbidden);
  CHECK(move_path(ws.root, "dir/secret", "stolen").code == OpCode::kForbidden);
  std::vector<Match> m;
  CHECK(grep(ws.root, "dir", "outside", 10, &m).code == OpCode::kForbidden);
  CHECK(slurp(ws.base + "/secret") == "outside");
  CHECK_FALSE(fs::exists(ws.base + "/new"));

  for (const char* p : {"../secret", "a/../../secret", "..", "/etc/passwd"}) {
    CAPTURE(p);
    OpStatus st = read_file(ws.root, p, 0, 100, &c);
    CHECK(st.code == OpCode::kForbidden);
    CHECK(write_file(ws.root, p, "x", false).code == OpCode::kForbidden);
  }
  // Moving the link itself is fine: it is a name inside the workspace.
  CHECK(move_path(ws.root, "abs", "abs2").ok());
}

TEST_CASE("helper ops round-trip a 1 MiB binary file, through files and through run's stdin") {
  TempWorkspace ws;
  std::string data(1 << 20, '\0');
  std::mt19937 rng(7);
  for (auto& ch : data) ch = static_cast<char>(rng());
  REQUIRE(write_file(ws.root, "blob.bin", data, false).ok());
  Chunk c;
  REQUIRE(read_file(ws.root, "blob.bin", 0, 2 << 20, &c).ok());
  CHECK(c.size == static_cast<std::int64_t>(data.size()));
  CHECK(c.data == data);

  RunSpec spec{{"cat"}};
  spec.has_stdin = true;
  spec.stdin_data = data;
  spec.output_cap = 2 << 20;
  spec.timeout_ms = 20000;
  RunOutcome o = must_run(ws.root, spec);
  CHECK(o.exit_code == 0);
  CHECK(o.out == data);
}

TEST_CASE("helper ops run gives output, exit code, env, cwd and stdin") {
  TempWorkspace ws;
  fs::create_directory(ws.path("sub"));
  RunSpec spec{{"sh", "-c", "echo \"$X|$(pwd)\"; read line; echo \"got $line\" >&2; exit 3"}};
  spec.env = {"X=two words"};
  spec.has_stdin = true;
  spec.stdin_data = "hello\n";
  RunOutcome o = must_run(ws.root, spec);
  CHECK(o.out == "two words|" + ws.base + "/ws\n");
  CHECK(o.err == "got hello\n");
  CHECK(o.exit_code == 3);
  CHECK_FALSE(o.timed_out);

  spec = RunSpec{{"pwd"}};
  spec.cwd = ws.path("sub");
  CHECK(must_run(ws.root, spec).out == ws.path("sub") + "\n");
  CHECK(must_run(ws.root, RunSpec{{"sh", "-c", "kill -TERM $$"}}).exit_code == 128 + 15);
  CHECK(must_run(ws.root, RunSpec{{"sh", "-c", "cat; echo end"}}).out == "end\n");  // no stdin: /dev/null

  RunOutcome ignored;
  CHECK(run(ws.root, RunSpec{{"no-such-command-xyz"}}, &ignored).code == OpCode::kNotFound);
  spec = RunSpec{{"true"}};
  spec.cwd = ws.path("missing");
  CHECK(run(ws.root, spec, &ignored).code == OpCode::kNotFound);
}

TEST_CASE("helper ops run caps each stream and counts what it dropped") {
  TempWorkspace ws;
  RunSpec spec{{"sh", "-c", "head -c 100000 /dev/zero; printf 12345 >&2"}};
  spec.output_cap = 1000;
  RunOutcome o = must_run(ws.root, spec);
  CHECK(o.out.size() == 1000);
  CHECK(o.out_dropped == 99000);
  CHECK(o.err == "12345");
  CHECK(o.err_dropped == 0);
  CHECK(o.exit_code == 0);
}

TEST_CASE("helper ops run kills the whole group at the deadline, escapees included") {
  TempWorkspace ws;
  const std::string mark = "FORGECTL_OPS_TEST_MARK=" + forge::random_hex(8);
  RunSpec spec{{"sh", "-c", "sleep 100 & setsid sleep 100 & sleep 100; echo late"}};
  spec.env = {mark};
  spec.timeout_ms = 500;
  auto start = std::chrono::steady_clock::now();
  RunOutcome o = must_run(ws.root, spec);
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(o.timed_out);
  CHECK(o.exit_code == 128 + 9);
  CHECK(o.out.find("late") == std::string::npos);
  CHECK(took < std::chrono::seconds(3));
  CHECK(none_left(mark));
}

TEST_CASE("helper ops run ends with its command: background jobs in its group go too") {
  TempWorkspace ws;
  const std::string mark = "FORGECTL_OPS_TEST_MARK=" + forge::random_hex(8);
  RunSpec spec{{"sh", "-c", "sleep 100 & echo done"}};
  spec.env = {mark};
  auto start = std::chrono::steady_clock::now();
  RunOutcome o = must_run(ws.root, spec);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  CHECK(o.out == "done\n");
  CHECK(o.exit_code == 0);
  CHECK_FALSE(o.timed_out);
  CHECK(none_left(mark));
}

TEST_CASE("helper ops grep finds lines by extended regex, skips binary files, and caps") {
  TempWorkspace ws;
  ws.put("a.txt", "alpha\nbeta\ngamma\n");
  ws.put("sub/b.txt", "no\nalphabet soup\n");
  ws.put("bin.dat", std::string("alpha\0beta\n", 11));
  std::vector<Match> m;
  REQUIRE(grep(ws.root, "", "^(alpha|gamma)", 10, &m).ok());
  REQUIRE(m.size() == 3);
  CHECK(m[0].path == "a.txt");
  CHECK(m[0].line == 1);
  CHECK(m[0].text == "alpha");
  CHECK(m[1].line == 3);
  CHECK(m[2].path == "sub/b.txt");
  CHECK(m[2].line == 2);
  CHECK(m[2].text == "alphabet soup");
  REQUIRE(grep(ws.root, "", "a", 2, &m).ok());
  CHECK(m.size() == 2);
  REQUIRE(grep(ws.root, "sub", "soup", 10, &m).ok());
  REQUIRE(m.size() == 1);
  CHECK(m[0].path == "sub/b.txt");
  CHECK(grep(ws.root, "", "(unclosed", 10, &m).code == OpCode::kInvalid);
}

TEST_CASE("helper ops serve answers framed requests and stops at a malformed one") {
  TempWorkspace ws;
  auto frame = [](const std::string& json) {
    std::uint32_t n = static_cast<std::uint32_t>(json.size());
    return std::string{static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
                       static_cast<char>(n)} +
           json;
  };
  auto serve_input = [&](const std::string& input, std::string* output) {
    int in[2], out[2];
    REQUIRE(pipe(in) == 0);
    REQUIRE(pipe(out) == 0);
    REQUIRE(write(in[1], input.data(), input.size()) == static_cast<ssize_t>(input.size()));
    close(in[1]);
    int rc = serve(ws.root, in[0], out[1], Orphans::kLeave);
    close(in[0]);
    close(out[1]);
    char buf[4096];
    for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) output->append(buf, static_cast<std::size_t>(n));
    close(out[0]);
    return rc;
  };
  std::string out;
  int rc = serve_input(frame(R"({"id":1,"op":"write","path":"f","data":"aGk="})") +
                           frame(R"({"id":2,"op":"read","path":"f"})") + frame(R"({"id":3,"op":"nope"})"),
                       &out);
  CHECK(rc == 0);
  CHECK(out == frame(R"({"id":1,"ok":true})") + frame(R"({"id":2,"ok":true,"data":"aGk=","size":2})") +
                   frame(R"({"id":3,"ok":false,"code":"invalid","message":"unknown op 'nope'"})"));

  out.clear();
  CHECK(serve_input(frame(R"({"op":"ping"})"), &out) == kExitMalformed);  // no id: nothing to answer to
  CHECK(out.empty());
  out.clear();
  CHECK(serve_input(frame("not json"), &out) == kExitMalformed);
  out.clear();
  CHECK(serve_input(frame(R"({"id":4,"op":"ping"})").substr(0, 8), &out) == kExitMalformed);  // cut short

  std::string resp;
  REQUIRE(handle_request(ws.root, R"({"id":5,"op":"read","path":"../x"})", &resp));
  CHECK(resp.find(R"("code":"forbidden")") != std::string::npos);
}

TEST_CASE("helper ops behind LocalSandbox: same confinement, errors as Errc") {
  TempWorkspace ws;
  fs::create_symlink("/etc/passwd", ws.path("p"));
  auto sb = forge::tools::LocalSandbox::open(ws.base + "/ws");
  REQUIRE(sb.has_value());
  CHECK((*sb)->workspace() == ws.base + "/ws");
  REQUIRE((*sb)->write_file("d/f.txt", "x\n", false).has_value());
  auto r = (*sb)->run({{"cat", "d/f.txt"}});
  REQUIRE(r.has_value());
  CHECK(r->out == "x\n");
  auto escaped = (*sb)->read_file("p", 0, 100);
  REQUIRE_FALSE(escaped.has_value());
  CHECK(escaped.error().code == forge::Errc::kForbidden);
  CHECK(escaped.error().what().find("reading 'p'") != std::string::npos);
  auto missing = (*sb)->stat("nope");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == forge::Errc::kNotFound);
  CHECK_FALSE(forge::tools::LocalSandbox::open(ws.base + "/absent").has_value());
}
