// The helper's privilege separation without Docker: its command line, the as-agent messages and
// environment filter, a real privilege drop in a forked child, and finding a helper by --token.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>
#include <sys/syscall.h>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "helper/as_agent_wire.h"
#include "helper/cli.h"
#include "helper/kill_token.h"
#include "helper/privdrop.h"

using namespace forge::helper;

namespace {

CommandLine must_parse(std::vector<std::string> args) {
  CommandLine cl;
  std::string error;
  REQUIRE_MESSAGE(parse_command_line(args, &cl, &error), error);
  return cl;
}

std::string parse_error(std::vector<std::string> args) {
  CommandLine cl;
  std::string error;
  if (parse_command_line(args, &cl, &error)) return "(accepted)";
  return error;
}

// Runs `body` in a forked child; its returned string ("" = fine) comes back through a pipe.
template <typename F>
std::string in_child(F body) {
  int p[2];
  REQUIRE(pipe(p) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(p[0]);
    const std::string out = body();
    (void)!write(p[1], out.data(), out.size());
    _exit(0);
  }
  close(p[1]);
  std::string got;
  char buf[512];
  for (ssize_t n; (n = read(p[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
  close(p[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  return got;
}

std::string status_line(const char* key) {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind(std::string(key) + ":", 0) == 0) return line.substr(line.find_first_not_of(" \t", strlen(key) + 1));
  return "";
}

}  // namespace

TEST_CASE("helper command line: today's forms still parse, and the new modes with their options") {
  CommandLine run = must_parse({"--timeout-ms", "1500", "--token", "abc", "--", "sh", "-c", "echo hi"});
  CHECK(run.mode == Mode::kRun);
  CHECK(run.timeout_ms == 1500);
  CHECK(run.token == "abc");
  CHECK(run.cmd == std::vector<std::string>{"sh", "-c", "echo hi"});
  CHECK_FALSE(run.drop);
  CHECK(must_parse({"--serve", "--root", "/work"}).root == "/work");
  CHECK(must_parse({"--kill-token", "t1"}).kill_token == "t1");
  CHECK(must_parse({"--version"}).mode == Mode::kVersion);
  CHECK(must_parse({"--kill-all"}).mode == Mode::kKillAll);
  CHECK(must_parse({"--kill-all", "--as", "1000:1000"}).drop);

  CommandLine dropped = must_parse({"--groups", "20,30", "--as", "1000:1001", "--", "id"});  // any order
  CHECK(dropped.drop);
  CHECK(dropped.as.uid == 1000);
  CHECK(dropped.as.gid == 1001);
  CHECK(dropped.as.groups == std::vector<gid_t>{20, 30});
  CHECK(must_parse({"--serve", "--root", "/w", "--as", "5:5", "--token", "t"}).drop);
  CHECK(must_parse({"--kill-token", "t", "--as", "5:5"}).drop);

  CommandLine server = must_parse({"--as-agent-server", "/tmp/aa/sock", "--as", "1000:1000", "--allow-uid", "2000",
                                   "--timeout-ms", "60000", "--max-children", "8"});
  CHECK(server.mode == Mode::kAsAgentServer);
  CHECK(server.socket == "/tmp/aa/sock");
  CHECK(server.allow_uid == 2000);
  CHECK(server.max_children == 8);
  CHECK(must_parse({"--as-agent-server", "/tmp/aa/sock", "--as", "1:1", "--allow-uid", "0"}).max_children == 64);
  // A token on the server's command line, for `--kill-token` (the grader's read in place).
  CHECK(must_parse({"--as-agent-server", "/s", "--as", "1:1", "--allow-uid", "2", "--token", "tk"}).token == "tk");

  // Everything after "--" is the command's, even what looks like our options.
  CommandLine client = must_parse({"--as-agent", "/tmp/aa/sock", "--cwd", "/work", "--", "prog", "--as", "0:0"});
  CHECK(client.mode == Mode::kAsAgent);
  CHECK(client.cwd == "/work");
  CHECK(client.cmd == std::vector<std::string>{"prog", "--as", "0:0"});
}

TEST_CASE("helper command line: every mistake is refused with the argument named") {
  const std::string long_socket = "/" + std::string(120, 's');
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "missing '--' and command"},
      {{"--"}, "missing command after '--'"},
      {{"--bogus", "--", "x"}, "unknown argument: --bogus"},
      {{"--timeout-ms"}, "option requires a value: --timeout-ms"},
      {{"--timeout-ms", "5s", "--", "x"}, "invalid --timeout-ms value: 5s"},
      {{"--timeout-ms", "99999999999999999999", "--", "x"}, "invalid --timeout-ms value"},
      {{"--token", "a", "--token", "b", "--", "x"}, "--token given twice"},
      {{"--token", "", "--", "x"}, "empty value for --token"},
      {{"--serve", "--as-agent", "/s/s"}, "--as-agent cannot be combined with --serve"},
      {{"--cwd", "/x", "--", "x"}, "--cwd is not an option of run mode"},
      {{"--serve"}, "--serve needs --root DIR"},
      {{"--serve", "--root", "/w", "--", "x"}, "'--' and a command do not go with --serve"},
      {{"--kill-token", "t", "--timeout-ms", "5"}, "--timeout-ms is not an option of --kill-token"},
      {{"--version", "--as", "1:1"}, "--version must be used alone"},
      {{"--kill-all", "--", "x"}, "'--' and a command do not go with --kill-all"},
      {{"--kill-all", "--token", "t"}, "--token is not an option of --kill-all"},
      {{"--as", "0:0", "--", "x"}, "--as: '0:0' names root"},
      {{"--as", "1000:0", "--", "x"}, "names root"},
      {{"--as", "1000", "--", "x"}, "--as: '1000' is not UID:GID"},
      {{"--as", "1000:abc", "--", "x"}, "is not UID:GID"},
      {{"--as", "4294967295:1", "--", "x"}, "is not UID:GID"},
      {{"--as", "-1:1", "--", "x"}, "is not UID:GID"},
      {{"--groups", "5", "--", "x"}, "--groups needs --as UID:GID"},
      {{"--as", "1:1", "--groups", "5,0", "--", "x"}, "--groups: group 0 (root) is refused"},
      {{"--as", "1:1", "--groups", "5,,6", "--", "x"}, "--groups: '' in '5,,6' is not a group id"},
      {{"--as-agent-server", "/t/s", "--as", "1000:1000"}, "--as-agent-server needs --allow-uid"},
      {{"--as-agent-server", "/t/s", "--allow-uid", "2000"}, "--as-agent-server needs --as UID:GID"},
      {{"--as-agent-server", "/t/s", "--as", "1000:1000", "--allow-uid", "1000"}, "--allow-uid must differ"},
      {{"--as-agent-server", "/t/s", "--as", "1:1", "--allow-uid", "2", "--max-children", "0"},
       "--max-children must be 1 to 1024: 0"},
      {{"--as-agent-server", "/t/s", "--as", "1:1", "--allow-uid", "x"}, "--allow-uid 'x' is not a uid"},
      {{"--as-agent-server", "t/s", "--as", "1:1", "--allow-uid", "2"}, "the socket path 't/s' is not absolute"},
      {{"--as-agent-server", long_socket, "--as", "1:1", "--allow-uid", "2"}, "is longer than 107 bytes"},
      {{"--as-agent-server", "/t/s", "--as", "1:1", "--allow-uid", "2", "--", "x"}, "do not go with --as-agent-server"},
      {{"--as-agent", "/t/s", "--as", "1:1", "--", "x"}, "--as is not an option of --as-agent"},
      {{"--as-agent", "/t/s", "--cwd", "rel", "--", "x"}, "--cwd 'rel' is not absolute"},
      {{"--as-agent", "/t/s"}, "missing '--' and command"},
  };
  for (const auto& [args, want] : cases) {
    std::string joined;
    for (const auto& a : args) joined += "[" + a + "]";
    CAPTURE(joined);
    const std::string got = parse_error(args);
    CHECK_MESSAGE(got.find(want) != std::string::npos, got);
  }
}

TEST_CASE("as-agent request frames round-trip exactly and are decoded strictly") {
  AgentRequest req;
  req.argv = {"python3", "-c", "print('a b')", "", "caf\xc3\xa9", "\xff\xfe"};  // empty and non-UTF-8 args too
  req.cwd = "/work/sub dir";
  req.env = {"PATH=/usr/bin:/bin", "EMPTY=", "EQ=a=b"};
  req.timeout_ms = 2500;
  std::string payload, error;
  REQUIRE(encode_request(req, &payload, &error));
  AgentRequest back;
  REQUIRE_MESSAGE(decode_request(payload, &back, &error), error);
  CHECK(back.argv == req.argv);
  CHECK(back.cwd == req.cwd);
  CHECK(back.env == req.env);
  CHECK(back.timeout_ms == 2500);

  const std::string head = frame_header(0x01020304u);
  CHECK(head == std::string("\x01\x02\x03\x04", 4));
  CHECK(frame_length(reinterpret_cast<const unsigned char*>(head.data())) == 0x01020304u);
  const std::string big = frame_header(kMaxAgentRequest + 1);
  CHECK(frame_length(reinterpret_cast<const unsigned char*>(big.data())) == kMaxAgentRequest + 1);

  auto refused = [](std::string_view p) {
    AgentRequest r;
    std::string e;
    return decode_request(p, &r, &e) ? std::string("(accepted)") : e;
  };
  using namespace std::string_literals;
  CHECK(refused("") == "not a version 1 request");
  CHECK(refused("V2\0C/\0Ax\0"s) == "not a version 1 request");
  CHECK(refused("C/\0V1\0Ax\0"s) == "not a version 1 request");
  CHECK(refused("V1\0Ax\0"s) == "no working directory");
  CHECK(refused("V1\0Crel\0Ax\0"s) == "the working directory is not absolute");
  CHECK(refused("V1\0C/\0C/\0Ax\0"s) == "two working directories");
  CHECK(refused("V1\0C/\0"s) == "empty command");
  CHECK(refused("V1\0C/\0A\0"s) == "empty command");
  CHECK(refused("V1\0C/\0Ax\0Zq\0"s) == "unknown field tag 'Z'");
  CHECK(refused("V1\0C/\0Ax"s) == "a field is not NUL-terminated");
  CHECK(refused("V1\0C/\0Ax\0Enoequals\0"s) == "an environment entry is not K=V");
  CHECK(refused("V1\0C/\0Ax\0E=v\0"s) == "an environment entry is not K=V");
  CHECK(refused("V1\0C/\0Ax\0T12x\0"s) == "a bad timeout");
  CHECK(refused("V1\0C/\0Ax\0T1\0T2\0"s) == "a bad timeout");
  std::string many = "V1\0C/\0"s;
  for (std::size_t i = 0; i <= kMaxAgentArgs; ++i) many += "Aa\0"s;
  CHECK(refused(many) == "too many command arguments");
}

TEST_CASE("as-agent requests that break a limit are refused before they are sent") {
  std::string payload, error;
  AgentRequest ok{{"x"}, "/", {}, 0};
  CHECK(encode_request(ok, &payload, &error));

  AgentRequest nul{{std::string("a\0b", 3)}, "/", {}, 0};
  CHECK_FALSE(encode_request(nul, &payload, &error));
  CHECK(error == "a value contains a NUL byte");
  AgentRequest rel{{"x"}, "work", {}, 0};
  CHECK_FALSE(encode_request(rel, &payload, &error));
  CHECK(error == "working directory 'work' is not absolute");
  AgentRequest none{{}, "/", {}, 0};
  CHECK_FALSE(encode_request(none, &payload, &error));
  CHECK(error == "empty command");
  AgentRequest huge{{"x", std::string(kMaxAgentRequest, 'a')}, "/", {}, 0};
  CHECK_FALSE(encode_request(huge, &payload, &error));
  CHECK(error.find("the limit is 1048576") != std::string::npos);
  AgentRequest bad_env{{"x"}, "/", {"NOEQUALS"}, 0};
  CHECK_FALSE(encode_request(bad_env, &payload, &error));
  CHECK(error == "environment entry 'NOEQUALS' is not K=V");
}

TEST_CASE("as-agent responses carry the status and a message cut to the limit") {
  AgentResponse out;
  std::string error;
  REQUIRE(decode_response(encode_response({137, ""}), &out, &error));
  CHECK(out.status == 137);
  CHECK(out.message.empty());
  REQUIRE(decode_response(encode_response({125, std::string(100000, 'm')}), &out, &error));
  CHECK(out.status == 125);
  CHECK(encode_response({125, std::string(100000, 'm')}).size() <= kMaxAgentResponse);
  CHECK(out.message.size() > 1000);

  using namespace std::string_literals;
  CHECK_FALSE(decode_response("", &out, &error));
  CHECK(error == "the response has no status");
  CHECK_FALSE(decode_response("S256\0"s, &out, &error));
  CHECK_FALSE(decode_response("Mhi\0S1\0"s, &out, &error));
  CHECK_FALSE(decode_response("S1\0Ma\0Mb\0"s, &out, &error));
  CHECK(error == "unexpected field in the response");
}

TEST_CASE("as-agent environment: the standard names and the listed ones, never the helper's token") {
  std::vector<std::string> vars = {"PATH=/bin",
                                   "HOME=/home/v",
                                   "LANG=C.UTF-8",
                                   "LC_ALL=C",
                                   "TERM=dumb",
                                   "SECRET=hidden",
                                   "FOO=1",
                                   "BAR=two words",
                                   "BAZ=3",
                                   "FORGECTL_EXEC_TOKEN=tok",
                                   "FORGECTL_AS_AGENT_ENV=FOO",
                                   "=odd",
                                   "NOEQ"};
  std::vector<char*> env;
  for (auto& v : vars) env.push_back(v.data());
  env.push_back(nullptr);
  std::vector<std::string> out;
  std::string error;
  REQUIRE(agent_environment(env.data(), " FOO,BAR\tFORGECTL_EXEC_TOKEN ", &out, &error));
  CHECK(out == std::vector<std::string>{"PATH=/bin", "HOME=/home/v", "LANG=C.UTF-8", "LC_ALL=C", "TERM=dumb", "FOO=1",
                                        "BAR=two words"});
  REQUIRE(agent_environment(env.data(), "", &out, &error));
  CHECK(out.size() == 5);
  CHECK_FALSE(agent_environment(env.data(), "FOO,BAD-NAME", &out, &error));
  CHECK(error == "FORGECTL_AS_AGENT_ENV: 'BAD-NAME' is not a variable name");
  std::string many;
  for (int i = 0; i <= 64; ++i) many += "N" + std::to_string(i) + ",";
  CHECK_FALSE(agent_environment(env.data(), many, &out, &error));
  CHECK(error.find("more than 64 names") != std::string::npos);
}

TEST_CASE("drop_privileges leaves no capability, no way back, and says what did not take") {
  if (geteuid() != 0) {
    // Unprivileged: dropping to ourselves works (it only clears and checks); anyone else is refused.
    const DropSpec self{getuid(), getgid(), {}};
    CHECK(in_child([&] {
            std::string e;
            return drop_privileges(self, &e) ? std::string() : e;
          }) == "");
    const DropSpec other{getuid() + 1, getgid(), {}};
    CHECK(in_child([&] {
            std::string e;
            return drop_privileges(other, &e) ? std::string("(dropped)") : e;
          }).find("Operation not permitted") != std::string::npos);
    return;
  }
  const std::string report = in_child([] {
    std::string e;
    if (!drop_privileges({65534, 65533, {65532}}, &e)) return "drop: " + e;
    std::string r;
    uid_t ru, eu, su;
    getresuid(&ru, &eu, &su);
    if (ru != 65534 || eu != 65534 || su != 65534) r += "uid not 65534; ";
    if (status_line("CapEff") != "0000000000000000" || status_line("CapPrm") != "0000000000000000" ||
        status_line("CapInh") != "0000000000000000" || status_line("CapAmb") != "0000000000000000")
      r += "capabilities left; ";
    if (status_line("NoNewPrivs") != "1") r += "no_new_privs unset; ";
    if (status_line("Groups").find("65532") == std::string::npos) r += "groups " + status_line("Groups") + "; ";
    if (setuid(0) == 0) r += "setuid(0) worked; ";
    // Again, already there: the idempotent path (no CAP_SETGID needed any more).
    if (!drop_privileges({65534, 65533, {65532}}, &e)) r += "second drop: " + e + "; ";
    if (drop_privileges({65531, 65533, {}}, &e))
      r += "dropped to another uid without privileges; ";
    else if (e.find("Operation not permitted") == std::string::npos)
      r += "unclear refusal: " + e + "; ";
    return r;
  });
  CHECK_MESSAGE(report == "", report);

  // Root without CAP_SETUID: fails closed, naming the capability.
  const std::string no_setuid = in_child([] {
    __user_cap_header_struct head{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    syscall(SYS_capget, &head, data);
    data[0].effective &= ~(1u << CAP_SETUID);
    data[0].permitted &= ~(1u << CAP_SETUID);
    syscall(SYS_capset, &head, data);
    std::string e;
    return drop_privileges({65534, 65534, {}}, &e) ? std::string("(dropped)") : e;
  });
  CHECK(no_setuid.find("setresuid(65534): Operation not permitted") != std::string::npos);
  CHECK(no_setuid.find("CAP_SETUID and CAP_SETGID") != std::string::npos);
}

TEST_CASE("kill_token finds a helper by its --token argument and its command by the environment") {
  const char* helper = std::getenv("FORGECTL_EXEC_HELPER");
  if (!helper || !*helper) {
    MESSAGE("FORGECTL_EXEC_HELPER is not set; skipped");
    return;
  }
  const std::string token = "unit-" + std::to_string(getpid());
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    execl(helper, helper, "--token", token.c_str(), "--", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::vector<pid_t> found;
  for (int i = 0; i < 200 && found.size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    found = token_holders(token);
  }
  CHECK(std::find(found.begin(), found.end(), pid) != found.end());  // the helper, by its command line
  CHECK(found.size() == 2);                                          // and its sleep, by FORGECTL_EXEC_TOKEN
  CHECK(kill_token(token) == 2);
  CHECK(waitpid(pid, nullptr, 0) == pid);
  // SIGKILL is delivered asynchronously: the orphaned sleep may need a moment to be gone.
  for (int i = 0; i < 100 && !token_holders(token).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(token_holders(token).empty());
}
