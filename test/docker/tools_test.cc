// Tools through the one governed path, against a real runner: timeouts that kill, confinement,
// output caps, MCP servers, env_passthrough, and a runner image that is not forgectl's.
#include <doctest/doctest.h>

#include <cstdlib>

#include "engine/exec.h"
#include "engine/images.h"
#include "engine/tar.h"
#include "support/containers.h"
#include "support/mcp_shout.h"
#include "support/stack_env.h"
#include "tools/stack_tools.h"

using namespace forge;
using namespace forge::test;
using tools::Actor;
using Kind = tools::ToolOutcome::Kind;

namespace {

tools::StackTools open_tools(const TestStack& s) {
  auto t = tools::open_stack_tools(*docker_env().client, s.result.name, {});
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  return std::move(*t);
}

std::string processes(const TestStack& s, const std::string& needle) {
  engine::ExecOptions ps{{"sh", "-c", "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -v grep | grep -F '" + needle + "' || true"}};
  auto r = engine::exec_run(*docker_env().client, s.id("runner"), ps);
  REQUIRE(r.has_value());
  return r->out;
}

}  // namespace

TEST_CASE("bash under a 2 s policy: a timeout error to the model, and nothing left running") {
  TempDir dir;
  auto task = dir.write("task.yaml",
                        "task_id: t-timeout\nname: t\ncategory: c\ndescription: d\n"
                        "tools:\n  agent:\n    enabled: [bash]\n  policies:\n    bash: {timeout_s: 2}\n"
                        "environment:\n  stack: none\n");
  TestStack s(task);
  auto t = open_tools(s);
  auto start = Clock::now();
  auto out = t.executor->call(Actor::kAgent, "bash", R"({"command":"sleep 100; echo late"})");
  auto took = elapsed_since(start);
  CHECK(out.kind == Kind::kTimeout);
  CHECK(out.content == "Error: 'bash' timed out after 2 s");
  CHECK(took < Millis(4000));
  CHECK(processes(s, "sleep 100") == "");
  // The trial goes on: the next call works.
  auto next = t.executor->call(Actor::kAgent, "bash", R"({"command":"echo still here"})");
  CHECK(next.content == "still here\n");
}

TEST_CASE("file tools are confined to the workspace; bash and the file tools see the same bytes") {
  TempDir dir;
  TestStack s(dir.write("env.yaml", "network_policy: no_internet\nstack: none\n"));
  auto t = open_tools(s);
  auto call = [&](const char* name, const std::string& args) { return t.executor->call(Actor::kAgent, name, args); };

  CHECK(call("read_file", R"({"path":"../../etc/passwd"})").content ==
        "Error: path '../../etc/passwd' is outside the workspace (/work)");
  CHECK(call("read_file", R"({"path":"/etc/passwd"})").content == "Error: path '/etc/passwd' is outside the workspace (/work)");
  REQUIRE(call("bash", R"({"command":"ln -s /etc/passwd /work/planted && echo ok"})").content == "ok\n");
  auto planted = call("read_file", R"({"path":"planted"})");
  CHECK(planted.kind == Kind::kFailed);
  CHECK(planted.content.find("passwd") == std::string::npos);  // refused, not read
  CHECK(planted.content.find("outside the workspace") != std::string::npos);

  std::string text = "line one\\nline \\\"two\\\"\\n\\tend";
  REQUIRE(call("write_file", R"({"path":"/env/fs/agent-visible/notes/a.txt","content":")" + text + R"("})").kind == Kind::kOk);
  CHECK(call("bash", R"({"command":"cat /work/notes/a.txt"})").content == "line one\nline \"two\"\n\tend");
  CHECK(call("bash", R"({"command":"od -c /work/notes/a.txt | head -1"})").content.find("l   i   n   e") != std::string::npos);
  CHECK(call("read_file", R"({"path":"notes/a.txt","offset":2,"limit":1})").content == "line \"two\"\n");
  CHECK(call("replace_lines", R"({"path":"notes/a.txt","old_text":"one","new_text":"1"})").kind == Kind::kOk);
  CHECK(call("read_file", R"({"path":"/work/notes/a.txt","limit":1})").content == "line 1\n");
  CHECK(call("list_dir", R"({"path":"notes"})").content == "file: a.txt (22 bytes)\n");
}

TEST_CASE("1 MiB of output is capped and the cut is marked") {
  TempDir dir;
  TestStack s(dir.write("env.yaml", "network_policy: no_internet\nstack: none\n"));
  auto t = open_tools(s);
  auto out = t.executor->call(Actor::kAgent, "bash", R"({"command":"head -c 1048576 /dev/zero | tr '\\0' x"})");
  CHECK(out.kind == Kind::kOk);
  CHECK(out.truncated);
  CHECK(out.content.size() < 70 * 1024);
  CHECK(out.content.find("[output truncated: ") != std::string::npos);
  CHECK(out.content.substr(0, 10) == "xxxxxxxxxx");
}

TEST_CASE("an MCP server inside the runner answers tools/list and tools/call, under the same governance") {
  TempDir dir;
  dir.write("server.sh", kShoutMcpServer);
  auto task = dir.write("task.yaml",
                        "task_id: t-mcp\nname: t\ncategory: c\ndescription: d\n"
                        "tools:\n  agent:\n    enabled: [shout, bash]\n"
                        "    mcp_server: {command: [sh, /.forgectl/task/server.sh], files: [server.sh]}\n"
                        "environment:\n  stack: none\n");
  TestStack s(task);
  auto t = open_tools(s);
  REQUIRE(t.mcp);
  auto specs = t.executor->specs(Actor::kAgent);
  REQUIRE(specs.size() == 2);
  CHECK(specs[0].name == "shout");
  CHECK(specs[0].description == "upper-cases text");
  CHECK(t.executor->call(Actor::kAgent, "shout", R"({"text":"hello"})").content == "HELLO");
  // Schema governance applies to the server's tools too (its schema was made strict).
  CHECK(t.executor->call(Actor::kAgent, "shout", R"({"text":"x","extra":1})").content ==
        "Error: invalid arguments for 'shout': unexpected property 'extra'");
  CHECK(t.executor->call(Actor::kAgent, "shout", R"({})").content ==
        "Error: invalid arguments for 'shout': missing required property 'text'");
  // The task's grading assets never went in with the server's files.
  CHECK(t.executor->call(Actor::kAgent, "bash", R"({"command":"ls /.forgectl/task"})").content == "server.sh\n");
}

TEST_CASE("env_passthrough lets exactly the named variable in and keeps a secret-looking one out") {
  TempDir dir;
  auto manifest = dir.write("env.yaml", "network_policy: no_internet\nstack: none\nrunner:\n  env_passthrough: [FORGECTL_TEST_PASS]\n");
  auto opts = test_up_options();
  opts.host.env = [](const char* name) -> std::optional<std::string> {
    std::string n = name;
    if (n == "FORGECTL_TEST_PASS") return "passed-through";
    if (n == "FORGECTL_TEST_API_KEY") return "sk-must-not-leak";
    return std::nullopt;
  };
  TestStack s(manifest, opts);
  auto t = open_tools(s);
  auto env = t.executor->call(Actor::kAgent, "bash", R"({"command":"env"})").content;
  CHECK(env.find("FORGECTL_TEST_PASS=passed-through\n") != std::string::npos);
  CHECK(env.find("sk-must-not-leak") == std::string::npos);
  CHECK(env.find("FORGECTL_TEST_API_KEY") == std::string::npos);
  auto info = engine::inspect_container(*docker_env().client, s.id("runner"));
  REQUIRE(info.has_value());
  for (const auto& kv : info->env) CHECK(kv.find("sk-must-not-leak") == std::string::npos);
}

TEST_CASE("the tools work in a runner image that is not forgectl's: a bare busybox image") {
  auto& c = *docker_env().client;
  engine::TarWriter w;
  REQUIRE(w.add_file("Dockerfile", "FROM scratch\nCOPY bin /bin\nCMD [\"sleep\", \"3600\"]\n").has_value());
  REQUIRE(w.add_directory("bin", 0755).has_value());
  REQUIRE(w.add_host_file("bin/busybox", "/bin/busybox").has_value());
  for (const char* a : {"sh", "sleep", "cat", "echo", "ls", "nc", "tr", "env"}) REQUIRE(w.add_symlink(std::string("bin/") + a, "busybox").has_value());
  auto ctx = w.finish();
  REQUIRE(ctx.has_value());
  std::string tag = "forgectl-test/bare:" + random_hex(4);
  engine::BuildSpec b;
  b.context_tar = *ctx;
  b.tags = {tag};
  auto id = engine::build_image(c, b);
  REQUIRE_MESSAGE(id.has_value(), (id ? "" : id.error().what()));
  struct Untag {
    std::string tag;
    ~Untag() { (void)engine::remove_image(*docker_env().client, tag, true); }
  } untag{tag};

  TempDir dir;
  {
    TestStack s(dir.write("env.yaml", "network_policy: no_internet\nstack: none\nrunner:\n  image: " + tag + "\n"));
    auto t = open_tools(s);
    CHECK(t.executor->call(Actor::kAgent, "write_file", R"({"path":"x.txt","content":"bare"})").kind == Kind::kOk);
    CHECK(t.executor->call(Actor::kAgent, "bash", R"({"command":"cat /work/x.txt; ls /"})").content.find("bare") == 0);
    CHECK(t.executor->call(Actor::kAgent, "read_file", R"({"path":"/env/fs/agent-visible/x.txt"})").content == "bare");
  }
}
