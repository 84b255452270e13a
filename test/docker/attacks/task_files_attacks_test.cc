// Red team, hostile tasks and hostile tool calls: a www/ or env_file that leads to host files is
// refused at load and at setup with the file's content never in a container or a message;
// http_request cannot smuggle a second request through its url; arguments that are not UTF-8 are
// refused before any tool runs.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "engine/exec.h"
#include "manifest/task_parse.h"
#include "support/containers.h"
#include "support/process.h"
#include "support/run_files.h"
#include "support/stack_env.h"
#include "support/trial_rig.h"
#include "tools/stack_tools.h"
#include "trial/trial_setup.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

// Assembled so no command line of the test carries it whole.
const std::string kKeyHead = "sk-fake-";
const std::string kKey = kKeyHead + "9c1e77d0a4";

// Host files a hostile task points at: a mode-600 file and a directory holding a .env.
struct HostSecrets {
  TempDir dir;
  std::string file, env_dir, env_file;
  HostSecrets() {
    file = dir.write("secret.txt", "api_key: " + kKey + "\n");
    ::chmod(file.c_str(), 0600);
    env_dir = dir.path() + "/project";
    fs::create_directories(env_dir);
    env_file = env_dir + "/.env";
    std::ofstream(env_file) << "OPENAI_API_KEY=" << kKey << "\nthis line is not a pair " << kKey << "\n";
  }
};

// A task on the core stack (json-db and mock-web), graded by a transcript rule.
void write_task(const TempDir& t, const std::string& extra = "") {
  t.write("task.yaml",
          "task_id: hostile_files\nname: H\ncategory: test\ndescription: d\n"
          "initial_user_message: \"Look at the site.\"\n"
          "tools: {agent: {enabled: [bash]}, user: {enabled: []}}\n"
          "user_simulator: {mode: scripted, scripted_flow: [{default: \"Thanks ###STOP###\"}]}\n"
          "grading: grading.yaml\n" +
              extra);
  t.write("grading.yaml", "transcript_rules: {max_turns: 5}\n");
}

std::string load_error(const std::string& dir) {
  auto t = manifest::load_task(dir + "/task.yaml");
  REQUIRE_FALSE(t.has_value());
  return t.error().what();
}

void validate_refuses(const std::string& dir, const std::string& needle) {
  auto r = run_forgectl({"validate", dir});
  REQUIRE(r.has_value());
  CAPTURE(r->text());
  CHECK(r->code == 2);
  CHECK((r->out + r->err).find(needle) != std::string::npos);
  CHECK(r->out.find(kKey) == std::string::npos);
  CHECK(r->err.find(kKey) == std::string::npos);
}

// Every file of container `id` (but the kernel's) that holds the key: "HIT:path" lines.
std::string scan(const std::string& id) {
  engine::ExecOptions o{{"sh", "-c",
                         "K=" + kKeyHead +
                             "; K=${K}9c1e77d0a4; for d in /*; do case $d in /proc|/sys|/dev) ;; *) "
                             "grep -rl \"$K\" \"$d\" 2>/dev/null | sed 's/^/HIT:/';; esac; done; echo SCAN-DONE"}};
  o.user = "0:0";
  o.timeout = Millis(30000);
  auto r = engine::exec_run(*docker_env().client, id, o);
  REQUIRE(r.has_value());
  return r->out;
}

}  // namespace

TEST_CASE("attack, task files: a www/ that links to host files is refused at load, naming it, never quoting it") {
  HostSecrets host;
  SUBCASE("www -> a mode-600 host file") {
    TempDir t;
    write_task(t);
    fs::create_symlink(host.file, t.path() + "/www");
    std::string e = load_error(t.path());
    CHECK(e.find("www/ (copied to mock-web): 'www' leads outside the task directory (a symlink to '" + host.file +
                 "')") != std::string::npos);
    CHECK(e.find(kKey) == std::string::npos);
    validate_refuses(t.path(), "'www' leads outside the task directory");
  }
  SUBCASE("www -> a directory holding a .env") {
    TempDir t;
    write_task(t);
    fs::create_symlink(host.env_dir, t.path() + "/www");
    std::string e = load_error(t.path());
    CHECK(e.find("'www' leads outside the task directory") != std::string::npos);
    CHECK(e.find(kKey) == std::string::npos);
    validate_refuses(t.path(), "'www' leads outside the task directory");
  }
  SUBCASE("a file of www/ -> the .env") {
    TempDir t;
    write_task(t);
    fs::create_directories(t.path() + "/www");
    t.write("www/index.html", "<h1>shop</h1>");
    fs::create_symlink(host.env_file, t.path() + "/www/config.txt");
    std::string e = load_error(t.path());
    CHECK(e.find("'www/config.txt' leads outside the task directory") != std::string::npos);
    CHECK(e.find(kKey) == std::string::npos);
  }
}

TEST_CASE("attack, task files: a www/ swapped for a link after loading is refused at setup; mock-web never sees it") {
  HostSecrets host;
  TempDir t;
  write_task(t);
  fs::create_directories(t.path() + "/www");
  t.write("www/index.html", "<h1>shop</h1>");
  auto task = manifest::load_task(t.path() + "/task.yaml");
  REQUIRE_MESSAGE(task.has_value(), (task ? "" : task.error().what()));
  fs::remove_all(t.path() + "/www");
  fs::create_symlink(host.env_dir, t.path() + "/www");

  SUBCASE("copy_www into a container") {
    TestContainer web(engine::ContainerSpec{});
    engine::ExecOptions mk{{"mkdir", "-p", "/srv/www"}};
    mk.user = "0:0";
    REQUIRE(engine::exec_run(*docker_env().client, web.id, mk).has_value());
    auto st = trial::copy_www(*docker_env().client, web.id, *task);
    REQUIRE_FALSE(st.has_value());
    CHECK(st.error().code == Errc::kForbidden);
    CHECK(st.error().what().find("'www' leads outside the task directory") != std::string::npos);
    CHECK(st.error().what().find(kKey) == std::string::npos);
    std::string found = scan(web.id);
    CHECK(found.find("SCAN-DONE") != std::string::npos);
    CHECK(found.find("HIT:") == std::string::npos);
  }
}

TEST_CASE("attack, task files: a trial whose www/ became a link is a setup error; the key is nowhere in it") {
  HostSecrets host;
  TempDir t;
  copy_example_task("web-lookup", t.path());
  auto task = manifest::load_task(t.path() + "/task.yaml");
  REQUIRE_MESSAGE(task.has_value(), (task ? "" : task.error().what()));
  fs::remove_all(t.path() + "/www");
  fs::create_symlink(host.file, t.path() + "/www");  // the mode-600 file this time

  TrialRig rig;
  auto r = rig.run(*task, {trial::AgentChoice::Kind::kNoop});
  CHECK_MESSAGE(r.outcome == results::Outcome::kSetupError, r.error);
  CHECK(r.error.find("'www' leads outside the task directory (a symlink to '" + host.file + "')") != std::string::npos);
  CHECK(r.error.find(kKey) == std::string::npos);
  CHECK(r.episode.messages.empty());  // no agent ever started
}

TEST_CASE("attack, task files: compose env_file outside the task is refused at load, its lines never shown") {
  HostSecrets host;
  TempDir t;
  write_task(t, "environment: {compose_file: compose.yaml}\n");
  fs::create_symlink(host.env_file, t.path() + "/linked.env");
  const std::string up = fs::relative(host.env_file, t.path()).string();  // "../forgectl-test-…/project/.env"
  t.write("compose.yaml", "services:\n  app:\n    image: busybox\n    env_file:\n      - " + host.env_file +
                              "\n      - " + up + "\n      - linked.env\n");
  std::string e = load_error(t.path());
  CAPTURE(e);
  CHECK(e.find("env_file '" + host.env_file + "' must be a path inside the compose file's directory") !=
        std::string::npos);
  CHECK(e.find("env_file '" + up + "' must be a path inside the compose file's directory") != std::string::npos);
  CHECK(e.find("env_file 'linked.env': 'linked.env' leads outside the compose file's directory") != std::string::npos);
  CHECK(e.find(kKey) == std::string::npos);
  validate_refuses(t.path(), "env_file 'linked.env'");

  // Inside the task, a malformed line is reported by its number only.
  TempDir ok;
  write_task(ok, "environment: {compose_file: compose.yaml}\n");
  ok.write("app.env", "GOOD=1\nnot a pair " + kKey + "\n");
  ok.write("compose.yaml", "services:\n  app:\n    image: busybox\n    env_file: app.env\n");
  e = load_error(ok.path());
  CHECK(e.find("app.env:2:1: expected KEY=VALUE") != std::string::npos);
  CHECK(e.find(kKey) == std::string::npos);
}

TEST_CASE("attack, tools: http_request with a CR/LF url is refused before anything is sent; bad UTF-8 never runs") {
  TempDir t;
  t.write("task.yaml",
          "task_id: attack_tools\nenvironment: {stack: none}\n"
          "tools:\n  agent: {enabled: [bash, http_request]}\n  user: {enabled: []}\n"
          "  policies: {http_request: {timeout_s: 3}}\n");
  TestStack stack(t.path() + "/task.yaml");
  auto tools = tools::open_stack_tools(*docker_env().client, stack.result.name, {});
  REQUIRE_MESSAGE(tools.has_value(), (tools ? "" : tools.error().what()));
  auto& ex = *tools->executor;
  // A listener in the runner records the bytes of the first connection it gets.
  auto bg = ex.call(tools::Actor::kAgent, "bash",
                    R"({"command":"setsid nc -l -p 8080 </dev/null >/tmp/got 2>&1 & sleep 0.3; echo up"})");
  REQUIRE_MESSAGE(bg.kind == tools::ToolOutcome::Kind::kOk, bg.content);

  auto smuggled = ex.call(tools::Actor::kAgent, "http_request",
                          R"({"method":"GET","url":"http://127.0.0.1:8080/\r\nGET /x HTTP/1.1\r\nHost: mock-web"})");
  CHECK(smuggled.kind != tools::ToolOutcome::Kind::kOk);
  CHECK(smuggled.content.find("url contains a control character or a space") != std::string::npos);
  auto mock = ex.call(tools::Actor::kAgent, "http_request", R"({"method":"GET","url":"http://mock-web/\r\nGET /x"})");
  CHECK(mock.content.find("url contains a control character or a space") != std::string::npos);
  // The control: a plain request does reach the listener, as the first connection it sees.
  (void)ex.call(tools::Actor::kAgent, "http_request", R"({"method":"GET","url":"http://127.0.0.1:8080/control"})");
  auto got = ex.call(tools::Actor::kAgent, "bash", R"({"command":"cat /tmp/got"})");
  CHECK(got.content.find("GET /control HTTP/1.1") != std::string::npos);
  CHECK(got.content.find("GET /x") == std::string::npos);

  auto bad = ex.call(tools::Actor::kAgent, "bash", "{\"command\":\"touch /tmp/ran-\xff\xfe; touch /tmp/ran\"}");
  CHECK(bad.kind == tools::ToolOutcome::Kind::kRefused);
  CHECK(bad.content.find("are not valid UTF-8") != std::string::npos);
  auto ran = ex.call(tools::Actor::kAgent, "bash", R"({"command":"ls /tmp/ran 2>&1 || echo absent"})");
  CHECK(ran.content.find("absent") != std::string::npos);
}
