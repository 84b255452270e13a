// Harbor tasks run end to end against the real daemon: written here in a temp dir, built from an
// environment/Dockerfile whose base is forgectl's runner image tagged by the test (nothing pulled),
// graded by tests/test.sh in a fresh verifier container.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "agent/budget.h"
#include "core/json.h"
#include "core/strings.h"
#include "engine/containers.h"
#include "engine/exec.h"
#include "engine/images.h"
#include "engine/networks.h"
#include "engine/tar.h"
#include "manifest/harbor/harbor_load.h"
#include "results/run_dir.h"
#include "results/run_json.h"
#include "results/trial_record.h"
#include "stack/task_build.h"
#include "support/atif_check.h"
#include "support/containers.h"
#include "support/docker_env.h"
#include "support/harbor_rig.h"
#include "support/manifest_helpers.h"
#include "support/process.h"
#include "trial/trial.h"
#include "trial/trial_files.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

// A Harbor task: answer.txt must hold 42; the verifier writes reward.txt (or `test_sh`'s own).
std::string write_task(const TempFiles& d, const std::string& name, const std::string& base,
                       const std::string& test_sh = "") {
  d.write(name + "/task.toml",
          "version = \"1.0\"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n"
          "[environment]\nnetwork_mode = \"no-network\"\nmemory_mb = 512\n");
  d.write(name + "/instruction.md", "Write 42 to answer.txt.\n");
  write_harbor_dockerfile(d, name, base);
  d.write(name + "/tests/test.sh",
          test_sh.empty() ? "if grep -q 42 answer.txt 2>/dev/null; then echo 1 > /logs/verifier/reward.txt; "
                            "else echo 0 > /logs/verifier/reward.txt; fi\n"
                          : test_sh);
  d.write(name + "/solution/solve.sh", "echo 42 > answer.txt\n");
  return d.dir() + "/" + name;
}

manifest::TaskConfig load(const std::string& dir) {
  auto t = manifest::load_harbor_task_config(dir);
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  return std::move(*t);
}

}  // namespace

TEST_CASE("harbor trial: the oracle passes through solve.sh; a no-op agent scores 0; the image is built once") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-");
  auto task = load(write_task(d, "answer42", rig.base));
  const std::string tag = rig.runner_tag(task);

  auto oracle = rig.run(task, trial::AgentChoice::Kind::kOracle);
  CAPTURE(oracle.error);
  REQUIRE(oracle.outcome == results::Outcome::kGraded);
  CHECK(oracle.grade.score == 1.0);
  CHECK(oracle.grade.binary_pass);
  REQUIRE(oracle.tool_log.size() == 1);  // solve.sh is its single tool call
  CHECK(oracle.tool_log[0].record.tool == "bash");
  CHECK(oracle.tool_log[0].record.arguments.find("/solution/solve.sh") != std::string::npos);
  auto first = engine::inspect_image(*docker_env().client, tag);
  REQUIRE(first.has_value());

  // Without its base a rebuild would fail: a second trial that passes reused the first build.
  REQUIRE(engine::remove_image(*docker_env().client, rig.base).has_value());
  auto noop = rig.run(task, trial::AgentChoice::Kind::kNoop);
  CAPTURE(noop.error);
  REQUIRE(noop.outcome == results::Outcome::kGraded);
  CHECK(noop.tool_log.empty());
  CHECK(noop.grade.score == 0.0);
  CHECK_FALSE(noop.grade.binary_pass);
  auto second = engine::inspect_image(*docker_env().client, tag);
  REQUIRE(second.has_value());
  CHECK(second->id == first->id);

  // A task whose base image is missing is refused before any build, naming the image.
  auto missing = load(write_task(d, "nobase", "forgectl-test/harbor-missing:" + docker_env().run_value));
  rig.runner_tag(missing);
  auto r = rig.run(missing, trial::AgentChoice::Kind::kOracle);
  CHECK(r.outcome != results::Outcome::kGraded);
  CHECK(r.error.find("forgectl-test/harbor-missing:" + docker_env().run_value) != std::string::npos);
  CHECK(r.error.find("never pulls") != std::string::npos);
  CHECK(r.tool_log.empty());
}

TEST_CASE("harbor trial: during the agent's run /tests and /solution are absent; /logs/agent reaches the trial dir") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-");
  auto task = load(write_task(d, "probe", rig.base));
  rig.runner_tag(task);
  const std::string replay = write_bash_replay(d, "replay.yaml",
                                               "ls -d /tests /solution /logs/verifier 2>&1; echo note > "
                                               "/logs/agent/note.txt; echo 42 > answer.txt; echo listed");
  auto r = rig.replay_graded(task, replay, 1);
  const std::string& out = r.tool_log[0].record.content;
  CAPTURE(out);
  CHECK(out.find("listed") != std::string::npos);
  CHECK(out.find("/tests: No such file") != std::string::npos);
  CHECK(out.find("/solution: No such file") != std::string::npos);
  CHECK(out.find("/logs/verifier: No such file") != std::string::npos);
  CHECK(r.grade.score == 1.0);  // the agent's answer, judged after it

  TempFiles out_dir("forgectl-harbor-out-");
  auto run = results::RunDir::open(out_dir.dir(), [](std::string_view t) { return std::string(t); });
  REQUIRE(run.has_value());
  REQUIRE(trial::write_trial_files(*run, r, "").has_value());
  const fs::path trial_dir = fs::path(out_dir.dir()) / "trials" / "probe" / "0";
  std::ifstream note(trial_dir / "logs" / "agent" / "note.txt");
  std::string text((std::istreambuf_iterator<char>(note)), {});
  CHECK(text == "note\n");
  CHECK(fs::exists(trial_dir / "logs" / "verifier" / "reward.txt"));

  // The ATIF trajectory: system, user, the agent's call with its observation, its answer.
  std::ifstream atif_in(trial_dir / "trajectory.atif.json");
  std::string atif((std::istreambuf_iterator<char>(atif_in)), {});
  auto doc = json::parse(atif, "trajectory.atif.json");
  REQUIRE_MESSAGE(doc.has_value(), atif);
  CHECK(test::atif_v17_violations(*doc) == std::vector<std::string>{});
  const auto* steps = json::get_array(*doc, "steps");
  REQUIRE(steps);
  REQUIRE(steps->Size() == 4);
  CHECK(json::get_string((*steps)[1], "message") == "Write 42 to answer.txt.\n");
  const auto& call = (*steps)[2];
  CHECK(json::get_string(call, "source") == "agent");
  const auto* calls = json::get_array(call, "tool_calls");
  REQUIRE(calls);
  REQUIRE(calls->Size() == 1);
  CHECK(json::get_string((*calls)[0], "function_name") == "bash");
  CHECK(json::get_string(*json::get_object((*calls)[0], "arguments"), "command").find("ls -d /tests") == 0);
  const auto* obs = json::get_object(call, "observation");
  REQUIRE(obs);
  const auto* results = json::get_array(*obs, "results");
  REQUIRE(results);
  REQUIRE(results->Size() == 1);
  CHECK(json::get_string((*results)[0], "content").find("listed") != std::string::npos);
  CHECK(json::get_string((*steps)[3], "message") == "done");
  const auto* fm = json::get_object(*doc, "final_metrics");
  REQUIRE(fm);
  CHECK(json::get_int(*fm, "total_steps") == 4);
  CHECK(fm->HasMember("total_prompt_tokens"));
}

TEST_CASE("harbor trial: every reward.json key is recorded; the score is its reward key") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-");
  auto task = load(write_task(d, "multi", rig.base,
                              "printf '{\"reward\": 0.75, \"accuracy\": 1, \"style\": 0.5}' > /logs/verifier/reward.json\n"));
  rig.runner_tag(task);
  auto r = rig.run(task, trial::AgentChoice::Kind::kOracle);
  CAPTURE(r.error);
  REQUIRE(r.outcome == results::Outcome::kGraded);
  CHECK(r.grade.score == 0.75);
  CHECK_FALSE(r.grade.binary_pass);
  CHECK(r.grade.components.at("reward.reward") == 0.75);
  CHECK(r.grade.components.at("reward.accuracy") == 1.0);
  CHECK(r.grade.components.at("reward.style") == 0.5);
}

TEST_CASE("harbor trial: a Terminal-Bench 1 task (task.yaml, run-tests.sh, solution.sh) graded from pytest's output") {
  HarborRig rig;
  TempFiles d("forgectl-tb1-");
  d.write("tb1/task.yaml", "instruction: Write 42 to answer.txt.\ndifficulty: easy\nparser_name: pytest\nmax_test_timeout_sec: 60\n");
  d.write("tb1/Dockerfile", "FROM " + rig.base + "\nWORKDIR /work\nUSER 1000:1000\n");
  d.write("tb1/docker-compose.yaml", "services:\n  client:\n    build:\n      dockerfile: Dockerfile\n"
                                     "    image: ${T_BENCH_TASK_DOCKER_CLIENT_IMAGE_NAME}\n"
                                     "    command: [\"sh\", \"-c\", \"sleep infinity\"]\n");
  // pytest's summary as our fake run-tests.sh prints it (the runner image has no Python).
  d.write("tb1/run-tests.sh",
          "if grep -q 42 answer.txt 2>/dev/null; then r=PASSED; n='1 passed'; else r=FAILED; n='1 failed'; fi\n"
          "echo '=========================== short test summary info ============================'\n"
          "echo \"$r tests/test_outputs.py::test_answer\"\n"
          "echo \"============================== $n in 0.01s ===============================\"\n");
  d.write("tb1/tests/test_outputs.py", "def test_answer():\n    assert open('answer.txt').read().strip() == '42'\n");
  d.write("tb1/solution.sh", "echo 42 > answer.txt\n");
  auto task = load(d.dir() + "/tb1");
  REQUIRE(task.harbor->format == manifest::HarborFormat::kTerminalBench1);
  rig.runner_tag(task);

  auto oracle = rig.run(task, trial::AgentChoice::Kind::kOracle);
  CAPTURE(oracle.error);
  CAPTURE(oracle.verifier_output);
  REQUIRE(oracle.outcome == results::Outcome::kGraded);
  CHECK(oracle.grade.score == 1.0);
  REQUIRE(oracle.tool_log.size() == 1);
  CHECK(oracle.tool_log[0].record.arguments.find("/solution/solution.sh") != std::string::npos);

  // The build context left the task's tests and solution out: the agent finds neither.
  const std::string replay =
      write_bash_replay(d, "replay.yaml", "ls /tests /solution /run-tests.sh /solution.sh 2>&1; echo listed");
  auto probe = rig.replay_graded(task, replay, 1);
  const std::string& out = probe.tool_log[0].record.content;
  CAPTURE(out);
  CHECK(out.find("listed") != std::string::npos);
  CHECK(out.find("test_outputs.py") == std::string::npos);
  CHECK(out.find("No such file") != std::string::npos);
  CHECK(probe.grade.score == 0.0);
}

TEST_CASE("harbor trial: Tolokaforge's Terminal-Bench layout (a stray task.toml) runs as TB1; a wrong answer fails") {
  HarborRig rig;
  TempFiles d("forgectl-tb1tf-");
  d.write("tf/task.toml", "version = \"1.0\"\n[verifier]\ntimeout_sec = 60\n");
  d.write("tf/task.yaml", "instruction: Write 42 to answer.txt.\ndifficulty: easy\nmax_test_timeout_sec: 60\n");
  write_harbor_dockerfile(d, "tf", rig.base);  // environment/Dockerfile, as Tolokaforge lays it out
  d.write("tf/docker-compose.yaml", "services:\n  client:\n    build:\n      context: .\n"
                                    "      dockerfile: environment/Dockerfile\n"
                                    "    command: [\"sh\", \"-c\", \"sleep infinity\"]\n");
  d.write("tf/run-tests.sh",
          "if grep -qx 42 answer.txt 2>/dev/null; then r=PASSED; n='1 passed'; else r=FAILED; n='1 failed'; fi\n"
          "echo '=========================== short test summary info ============================'\n"
          "echo \"$r tests/test_outputs.py::test_answer\"\n"
          "echo \"============================== $n in 0.01s ===============================\"\n");
  d.write("tf/tests/test_outputs.py", "def test_answer():\n    assert open('answer.txt').read().strip() == '42'\n");
  d.write("tf/solution.sh", "echo 42 > answer.txt\n");
  auto task = load(d.dir() + "/tf");
  REQUIRE(task.harbor->format == manifest::HarborFormat::kTerminalBench1);
  rig.runner_tag(task);

  auto oracle = rig.run(task, trial::AgentChoice::Kind::kOracle);
  CAPTURE(oracle.error);
  CAPTURE(oracle.verifier_output);
  REQUIRE(oracle.outcome == results::Outcome::kGraded);
  CHECK(oracle.grade.score == 1.0);

  auto wrong = rig.replay_graded(task, write_bash_replay(d, "wrong.yaml", "echo 41 > answer.txt"), 1);
  CHECK(wrong.grade.score == 0.0);
  CHECK_FALSE(wrong.grade.binary_pass);
}

namespace {

// The agent's one call waits for /tmp/go (the test's signal that the fake internet is up), then
// asks the egress proxy for `allowed` and `denied` and tries the fake internet's address directly.
const char* kProbeNet =
    "i=0; while [ ! -f /tmp/go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; "
    "echo PROXY=$HTTPS_PROXY; "
    "(printf \"CONNECT allowed.example.test:443 HTTP/1.1\\r\\n\\r\\nGET /index.html HTTP/1.0\\r\\n\\r\\n\"; sleep 1) "
    "| nc -w 3 egress-proxy 3128; echo; echo SECOND; "
    "(printf \"CONNECT denied.example.test:443 HTTP/1.1\\r\\n\\r\\n\"; sleep 1) | nc -w 3 egress-proxy 3128; echo; "
    "echo DIRECT; wget -T 2 -q -O- http://$(cat /tmp/go):443/index.html 2>&1; echo END";

std::vector<engine::ContainerSummary> run_containers(const std::string& run_id, const std::string& role) {
  auto cs = engine::list_containers(*docker_env().client, {{"label", {std::string("io.forgectl.run=") + run_id,
                                                                      std::string("io.forgectl.role=") + role}}});
  REQUIRE(cs.has_value());
  return *cs;
}

}  // namespace

TEST_CASE("harbor trial: allowlist reaches only its host through the egress proxy; no-network has no proxy") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-net-");
  auto dir = write_task(d, "allow", rig.base);
  d.write("allow/task.toml", "version = \"1.0\"\n[verifier]\ntimeout_sec = 60\n[environment]\n"
                             "network_mode = \"allowlist\"\nallowed_hosts = [\"allowed.example.test\"]\n");
  auto task = load(dir);
  REQUIRE(task.environment.manifest.network_policy == manifest::NetworkPolicy::kLimitedInternet);
  task.environment.manifest.allow_private = true;  // the fake internet sits on a private subnet
  rig.runner_tag(task);
  const std::string replay = write_bash_replay(d, "replay.yaml", kProbeNet);

  trial::TrialResult r;
  std::thread t([&] { r = rig.run(task, trial::AgentChoice::Kind::kReplay, replay); });
  // The stack's edge network, once up: the fake internet joins it under two names.
  std::string edge, runner;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while ((edge.empty() || runner.empty()) && std::chrono::steady_clock::now() < until) {
    auto nets = engine::list_networks(*docker_env().client, {{"label", {"io.forgectl.run=" + rig.env.run_id}}});
    if (nets)
      for (const auto& n : *nets)
        if (n.name.size() > 5 && n.name.ends_with("-edge")) edge = n.name;
    for (const auto& c : run_containers(rig.env.run_id, "runner"))
      if (c.state == "running") runner = c.id;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::optional<TestContainer> inet;
  if (!edge.empty() && !runner.empty()) {
    engine::ContainerSpec s;
    s.network = edge;
    s.aliases = {"allowed.example.test", "denied.example.test"};
    s.cmd = std::vector<std::string>{"sh", "-c", "mkdir -p /tmp/w && echo hello-internet > /tmp/w/index.html && "
                                                 "exec httpd -f -p 443 -h /tmp/w"};
    inet.emplace(s);
    auto info = engine::inspect_container(*docker_env().client, inet->id);
    REQUIRE(info.has_value());
    const std::string ip = info->networks.begin()->second.ip_address;
    engine::ExecOptions go{{"sh", "-c", "echo " + ip + " > /tmp/go"}};
    go.timeout = Millis(20000);
    CHECK(engine::exec_run(*docker_env().client, runner, go).has_value());
  }
  t.join();
  REQUIRE_FALSE(edge.empty());
  CAPTURE(r.error);
  REQUIRE(r.outcome == results::Outcome::kGraded);
  REQUIRE(r.tool_log.size() == 1);
  const std::string& out = r.tool_log[0].record.content;
  CAPTURE(out);
  const auto second = out.find("SECOND"), direct = out.find("DIRECT");
  REQUIRE(second != std::string::npos);
  REQUIRE(direct != std::string::npos);
  CHECK(out.find("PROXY=http://egress-proxy:3128") != std::string::npos);
  CHECK(out.substr(0, second).find("hello-internet") != std::string::npos);
  CHECK(out.substr(second, direct - second).find("403 Forbidden") != std::string::npos);
  CHECK(out.substr(direct).find("hello-internet") == std::string::npos);  // only through the proxy

  // no-network: no proxy, no edge network, nothing named outside the task.
  auto closed_dir = write_task(d, "closed", rig.base);
  auto closed = load(closed_dir);
  REQUIRE(closed.environment.manifest.network_policy == manifest::NetworkPolicy::kNoInternet);
  rig.runner_tag(closed);
  const std::string replay2 = d.write("replay2.yaml",
      "messages:\n  - role: assistant\n    content: \"\"\n    tool_calls:\n      - name: bash\n        arguments:\n"
      "          command: 'echo PROXY=$HTTPS_PROXY; nc -w 2 egress-proxy 3128 </dev/null 2>&1; echo rc=$?'\n"
      "  - role: assistant\n    content: \"done\"\n");
  auto c = rig.replay_graded(closed, replay2, 1);
  const std::string& cout_ = c.tool_log[0].record.content;
  CAPTURE(cout_);
  CHECK(cout_.find("PROXY=\n") != std::string::npos);
  CHECK(cout_.find("rc=0") == std::string::npos);
}

namespace {

// The verifier's probe: waits for /tmp/go (the test's signal, holding the fake internet's
// address, once it has joined the verifier's network), then tries the upstream directly by name
// and address and through $HTTPS_PROXY, for an allowed and a denied name. reward.json holds
// each outcome as a key; "reward" is 1. Measures that are no reward (the uid) go to its output:
// every reward.json key must be a number in [0, 1].
const char* kVerifierProbe = R"SH(i=0; while [ ! -f /tmp/go ] && [ $i -lt 900 ]; do sleep 0.1; i=$((i+1)); done
ip=$(cat /tmp/go 2>/dev/null)
get() { (printf 'GET /index.html HTTP/1.0\r\n\r\n'; sleep 1) | nc -w 3 "$1" "$2" 2>/dev/null | grep -c hello-internet; }
direct_ip=$(get "$ip" 443)
direct_name=$(get allowed.example.test 443)
allowed=0; denied=0
if [ -n "$HTTPS_PROXY" ]; then
  allowed=$( (printf 'CONNECT allowed.example.test:443 HTTP/1.1\r\n\r\nGET /index.html HTTP/1.0\r\n\r\n'; sleep 1) | nc -w 3 egress-proxy 3128 2>/dev/null | grep -c hello-internet)
  denied=$( (printf 'CONNECT denied.example.test:443 HTTP/1.1\r\n\r\nGET /index.html HTTP/1.0\r\n\r\n'; sleep 1) | nc -w 3 egress-proxy 3128 2>/dev/null | grep -c hello-internet)
fi
echo "uid=$(id -u) ip=$ip direct_ip=$direct_ip direct_name=$direct_name allowed=$allowed denied=$denied proxy=$HTTPS_PROXY"
printf '{"reward": 1, "direct_ip": %s, "direct_name": %s, "proxy_allowed": %s, "proxy_denied": %s}' \
  "${direct_ip:-0}" "${direct_name:-0}" "${allowed:-0}" "${denied:-0}" > /logs/verifier/reward.json
)SH";

// A task whose agent phase has no network and whose verifier's is `verifier_toml` ([verifier] lines).
manifest::TaskConfig verifier_net_task(const TempFiles& d, const std::string& name, const std::string& base,
                                       const std::string& verifier_toml) {
  auto dir = write_task(d, name, base, kVerifierProbe);
  d.write(name + "/task.toml", "version = \"1.0\"\n[verifier]\ntimeout_sec = 120\n" + verifier_toml +
                                   "[environment]\nnetwork_mode = \"no-network\"\n");
  auto t = load(dir);
  t.environment.manifest.allow_private = true;  // the fake internet sits on a private subnet
  return t;
}

// Runs the task's trial; once its grader runs, an httpd answering as allowed.example.test and
// denied.example.test joins the verifier's network whose name ends in `suffix` (when there is one;
// else a network of the test's own), and its address goes to the grader's /tmp/go.
trial::TrialResult run_with_upstream(HarborRig& rig, const manifest::TaskConfig& task, const std::string& suffix,
                                     bool& joined) {
  trial::TrialResult r;
  std::thread t([&] { r = rig.run(task, trial::AgentChoice::Kind::kOracle); });
  std::string grader, net;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  while (grader.empty() && std::chrono::steady_clock::now() < until) {
    for (const auto& c : run_containers(rig.env.run_id, "grader"))
      if (c.state == "running") grader = c.id;
    if (grader.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!suffix.empty()) {
    auto nets = engine::list_networks(*docker_env().client, {{"label", {"io.forgectl.run=" + rig.env.run_id}}});
    if (nets)
      for (const auto& n : *nets)
        if (n.name.ends_with(suffix)) net = n.name;
  }
  joined = !net.empty();
  std::optional<TestNetwork> own;
  if (net.empty()) {
    engine::NetworkSpec s{"forgectl-test-inet-" + random_hex(4)};
    s.ipam = engine::IpamConfig{free_test_subnet(), ""};
    own.emplace(s);
    net = own->id;
  }
  std::optional<TestContainer> inet;
  if (!grader.empty()) {
    engine::ContainerSpec s;
    s.network = net;
    s.aliases = {"allowed.example.test", "denied.example.test"};
    s.cmd = std::vector<std::string>{"sh", "-c",
                                     "mkdir -p /tmp/w && echo hello-internet > /tmp/w/index.html && "
                                     "exec httpd -f -p 443 -h /tmp/w"};
    inet.emplace(s);
    auto info = engine::inspect_container(*docker_env().client, inet->id);
    if (info && !info->networks.empty()) {
      engine::ExecOptions go{{"sh", "-c", "echo " + info->networks.begin()->second.ip_address + " > /tmp/go"}};
      go.timeout = Millis(20000);
      (void)engine::exec_run(*docker_env().client, grader, go);
    }
  }
  t.join();
  return r;
}

}  // namespace

TEST_CASE("harbor verifier network: allowlist reaches only its hosts through a proxy of its own; no-network nothing") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-vnet-");
  auto allow = verifier_net_task(d, "vallow", rig.base,
                                 "network_mode = \"allowlist\"\nallowed_hosts = [\"allowed.example.test\"]\n");
  rig.runner_tag(allow);
  bool joined = false;
  auto r = run_with_upstream(rig, allow, "-edge", joined);
  CAPTURE(r.error);
  CAPTURE(r.verifier_output);
  CHECK(joined);
  REQUIRE(r.outcome == results::Outcome::kGraded);
  CHECK(r.grade.score == 1.0);
  CHECK(r.grade.components.at("reward.proxy_allowed") == 1.0);  // the listed host, through the proxy
  CHECK(r.grade.components.at("reward.proxy_denied") == 0.0);   // any other name: refused
  CHECK(r.grade.components.at("reward.direct_ip") == 0.0);      // no way around the proxy
  CHECK(r.grade.components.at("reward.direct_name") == 0.0);
  CHECK(r.verifier_output.find("proxy=http://egress-proxy:3128") != std::string::npos);
  CHECK(r.phases.count("ahead_grader") == 1);  // the grader and its network were made ahead
  CHECK(rig.left_nothing());

  // The same probe with no [verifier] network: the baseline no-network, no interface but lo.
  auto closed = verifier_net_task(d, "vclosed", rig.base, "");
  rig.runner_tag(closed);
  auto c = run_with_upstream(rig, closed, "", joined);
  CAPTURE(c.error);
  CAPTURE(c.verifier_output);
  REQUIRE(c.outcome == results::Outcome::kGraded);
  CHECK(c.grade.components.at("reward.direct_ip") == 0.0);
  CHECK(c.grade.components.at("reward.proxy_allowed") == 0.0);
  CHECK(c.verifier_output.find("proxy= ") == std::string::npos);
  CHECK(c.verifier_output.find("proxy=\n") != std::string::npos);
  CHECK(rig.left_nothing());
}

TEST_CASE("harbor verifier network: public joins a network of its own whose upstream answers directly") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-vpub-");
  auto pub = verifier_net_task(d, "vpublic", rig.base, "network_mode = \"public\"\n");
  rig.runner_tag(pub);
  bool joined = false;
  auto r = run_with_upstream(rig, pub, "-net", joined);
  CAPTURE(r.error);
  CAPTURE(r.verifier_output);
  CHECK(joined);
  REQUIRE(r.outcome == results::Outcome::kGraded);
  CHECK(r.grade.components.at("reward.direct_ip") == 1.0);
  CHECK(r.grade.components.at("reward.direct_name") == 1.0);
  CHECK(r.grade.components.at("reward.proxy_allowed") == 0.0);  // no proxy in public
  CHECK(r.phases.count("ahead_grader") == 1);
  CHECK(rig.left_nothing());
}

TEST_CASE("harbor verifier user: a uid or an image's user name runs the tests; root and the agent's ids are refused") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-vuser-");
  auto with_user = [&](const std::string& name, const std::string& user_toml) {
    auto dir = write_task(d, name, rig.base,
                          "echo \"uid=$(id -u) tests_owner=$(stat -c %u /tests/test.sh);\"; "
                          "echo '{\"reward\": 1}' > /logs/verifier/reward.json\n");
    d.write(name + "/task.toml", "version = \"1.0\"\n[verifier]\ntimeout_sec = 60\n" + user_toml +
                                     "[environment]\nnetwork_mode = \"no-network\"\n");
    // The image's own users: a checker at 2500, and a name for the agent's uid.
    d.write(name + "/environment/passwd",
            "root:x:0:0:root:/root:/bin/sh\nagent:x:1000:1000::/home/agent:/bin/sh\n"
            "checker:x:2500:2501::/tmp:/bin/sh\n");
    d.write(name + "/environment/Dockerfile",
            "FROM " + rig.base + "\nCOPY passwd /etc/passwd\nWORKDIR /work\nUSER 1000:1000\n");
    auto t = load(dir);
    rig.runner_tag(t);
    return t;
  };

  auto by_uid = rig.run(with_user("vuid", "user = 2345\n"), trial::AgentChoice::Kind::kOracle);
  CAPTURE(by_uid.error);
  REQUIRE(by_uid.outcome == results::Outcome::kGraded);
  CHECK(by_uid.verifier_output.find("uid=2345 tests_owner=2345;") != std::string::npos);

  auto by_name = rig.run(with_user("vname", "user = \"checker\"\n"), trial::AgentChoice::Kind::kOracle);
  CAPTURE(by_name.error);
  REQUIRE(by_name.outcome == results::Outcome::kGraded);
  CHECK(by_name.verifier_output.find("uid=2500 ") != std::string::npos);

  auto unset = rig.run(with_user("vdefault", ""), trial::AgentChoice::Kind::kOracle);
  REQUIRE(unset.outcome == results::Outcome::kGraded);
  CHECK(unset.verifier_output.find("uid=2000 ") != std::string::npos);

  for (auto [name, toml, why] :
       {std::tuple{"vagent", "user = 1000\n", "shares the agent's uid or gid 1000"},
        std::tuple{"vagentname", "user = \"agent\"\n", "shares the agent's uid or gid 1000"},
        std::tuple{"vagentgid", "user = \"3000:1000\"\n", "shares the agent's uid or gid 1000"},
        std::tuple{"vroot", "user = \"root\"\n", "is root"},
        std::tuple{"vnobody", "user = \"nobody-here\"\n", "has no user 'nobody-here'"}}) {
    CAPTURE(name);
    auto r = rig.run(with_user(name, toml), trial::AgentChoice::Kind::kOracle);
    CAPTURE(r.error);
    CHECK(r.outcome == results::Outcome::kSetupError);
    CHECK(r.error.find(why) != std::string::npos);
    CHECK(r.error.find("[verifier].user") != std::string::npos);
  }
  CHECK(rig.left_nothing());
}

TEST_CASE("harbor env: ${VAR} templates read the host only for --env-passthrough names, in every table") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-env-");
  std::map<std::string, std::string> host{{"FORGECTL_TEST_HVAR", "it's $ok"}, {"FORGECTL_TEST_HSECRET", "leaked"}};
  rig.env.host.env = [host](const char* k) -> std::optional<std::string> {
    auto it = host.find(k);
    return it == host.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  rig.cfg.env_passthrough = {"FORGECTL_TEST_HVAR"};
  auto dir = write_task(
      d, "envs", rig.base,
      "ok() { [ \"$1\" = \"$2\" ] && echo 1 || echo 0; }\n"
      "printf '{\"reward\": 1, \"solution\": %s, \"environment\": %s, \"verifier\": %s, "
      "\"not_passed\": %s, \"literal\": %s}' "
      "\"$(ok \"$(cat answer.txt)\" \"it's \\$ok|it's \\$ok\")\" \"$(ok \"$FROM_ENV\" \"it's \\$ok\")\" "
      "\"$(ok \"$V\" \"it's \\$ok\")\" \"$(ok \"$SECRET\" fallback)\" \"$(ok \"$LIT\" '${NOT_A_TEMPLATE} x')\" "
      "> /logs/verifier/reward.json\n");
  d.write("envs/task.toml",
          "version = \"1.0\"\n"
          "[verifier]\ntimeout_sec = 60\nenv = { V = \"${FORGECTL_TEST_HVAR}\", SECRET = "
          "\"${FORGECTL_TEST_HSECRET:-fallback}\" }\n"
          "[environment]\nnetwork_mode = \"no-network\"\n"
          "env = { FROM_ENV = \"${FORGECTL_TEST_HVAR}\", LIT = \"${NOT_A_TEMPLATE} x\" }\n"
          "[solution]\nenv = { S = \"${FORGECTL_TEST_HVAR}\" }\n");
  d.write("envs/solution/solve.sh", "printf '%s|%s' \"$S\" \"$FROM_ENV\" > answer.txt\n");
  auto task = load(dir);
  rig.runner_tag(task);
  auto r = rig.run(task, trial::AgentChoice::Kind::kOracle);
  CAPTURE(r.error);
  CAPTURE(r.verifier_output);
  REQUIRE(r.outcome == results::Outcome::kGraded);
  CHECK(r.grade.components.at("reward.solution") == 1.0);     // [solution].env and [environment].env in solve.sh
  CHECK(r.grade.components.at("reward.environment") == 1.0);  // [environment].env in the verifier too
  CHECK(r.grade.components.at("reward.verifier") == 1.0);
  CHECK(r.grade.components.at("reward.not_passed") == 1.0);  // set on the host, not passed: the fallback
  CHECK(r.grade.components.at("reward.literal") == 1.0);
  // The value never shows in the oracle's tool call.
  REQUIRE(r.tool_log.size() == 1);
  CHECK(r.tool_log[0].record.arguments.find("it's") == std::string::npos);

  // A template without a fallback whose variable the run does not pass stops the trial as a setup
  // error naming the flag; nothing of it is left.
  d.write("envs/task.toml",
          "version = \"1.0\"\n[environment]\nnetwork_mode = \"no-network\"\n"
          "env = { KEY = \"${FORGECTL_TEST_HSECRET}\" }\n");
  auto bad = load(dir);
  auto b = rig.run(bad, trial::AgentChoice::Kind::kOracle);
  CHECK(b.outcome == results::Outcome::kSetupError);
  CHECK(b.error.find("--env-passthrough FORGECTL_TEST_HSECRET") != std::string::npos);
  CHECK(b.error.find("[environment].env") != std::string::npos);
  CHECK(rig.left_nothing());
}

TEST_CASE("harbor healthcheck: the agent starts once the check passes; a check that never does is the environment's") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-hc-");
  auto with_check = [&](const std::string& name, const std::string& hc_toml) {
    auto dir = write_task(d, name, rig.base);
    d.write(name + "/task.toml",
            "version = \"1.0\"\n[verifier]\ntimeout_sec = 60\n"
            "[environment]\nnetwork_mode = \"no-network\"\n[environment.healthcheck]\n" +
                hc_toml);
    auto t = load(dir);
    rig.runner_tag(t);
    return t;
  };
  // Passes on its third run: the count it keeps in /tmp is what the agent finds.
  auto ok = with_check("hcok",
                       "command = 'n=$(cat /tmp/hc 2>/dev/null || echo 0); n=$((n+1)); echo $n > /tmp/hc; "
                       "[ $n -ge 3 ]'\ninterval_sec = 0.2\nretries = 5\n");
  auto r = rig.run(ok, trial::AgentChoice::Kind::kReplay,
                   write_bash_replay(d, "replay.yaml", "cat /tmp/hc; echo 42 > answer.txt"));
  CAPTURE(r.error);
  REQUIRE(r.outcome == results::Outcome::kGraded);
  REQUIRE(r.tool_log.size() == 1);
  CHECK(r.tool_log[0].record.content.find("3") == 0);
  CHECK(r.grade.score == 1.0);

  // Failures during start_period do not count; afterwards `retries` in a row end the trial before
  // the agent, as an infra error of the sandbox (retried), not the model's 0. The start period is
  // long enough for an attempt in it even when each exec takes a second on a loaded machine.
  auto never = with_check("hcbad",
                          "command = 'echo not-yet; date +%s%N >> /tmp/tries; exit 3'\ninterval_sec = 0.1\n"
                          "retries = 2\nstart_period_sec = 4\nstart_interval_sec = 0.2\n");
  auto b = rig.run(never, trial::AgentChoice::Kind::kOracle);
  CAPTURE(b.error);
  CHECK(b.outcome == results::Outcome::kInfraError);
  CHECK(b.infra_kind == results::InfraKind::kSandbox);
  CHECK(b.error.find("did not become healthy") != std::string::npos);
  CHECK(b.error.find("failed 2 time(s) in a row") != std::string::npos);
  CHECK(b.error.find("exit code 3: not-yet") != std::string::npos);
  CHECK(b.error.find(" 2 attempt(s)") == std::string::npos);  // the start period's attempts came first
  CHECK(b.tool_log.empty());

  // A check past its timeout counts as a failure.
  auto slow = with_check("hcslow", "command = 'sleep 30'\ntimeout_sec = 1\nretries = 1\n");
  auto s = rig.run(slow, trial::AgentChoice::Kind::kOracle);
  CAPTURE(s.error);
  CHECK(s.outcome == results::Outcome::kInfraError);
  CHECK(s.error.find("timed out after 1") != std::string::npos);
  CHECK(rig.left_nothing());
}

TEST_CASE("harbor artifacts: declared paths reach the trial directory and the verifier; links and exclusions do not") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-art-");
  auto with_artifacts = [&](const std::string& name, const std::string& artifacts_toml, const std::string& hooks = "") {
    auto dir = write_task(
        d, name, rig.base,
        "v() { if eval \"$1\"; then echo 1; else echo 0; fi; }\n"
        "echo \"owner=$(stat -c %u /outdir/result.txt 2>/dev/null);\"\n"
        "printf '{\"reward\": 1, \"seen\": %s, \"link\": %s, \"excluded\": %s}' "
        "\"$(v 'grep -q hello /outdir/result.txt')\" "
        "\"$(v '[ -L /outdir/link ] || [ -e /outdir/link ]')\" \"$(v '[ -e /outdir/junk.tmp ]')\" "
        "> /logs/verifier/reward.json\n");
    d.write(name + "/task.toml", "version = \"1.0\"\n" + artifacts_toml +
                                     "[verifier]\ntimeout_sec = 60\n" +
                                     hooks + "[environment]\nnetwork_mode = \"no-network\"\n");
    d.write(name + "/environment/outdir/.keep", "");
    d.write(name + "/environment/Dockerfile",
            "FROM " + rig.base + "\nCOPY --chown=1000:1000 outdir /outdir\nWORKDIR /work\nUSER 1000:1000\n");
    auto t = load(dir);
    rig.runner_tag(t);
    return t;
  };
  const std::string replay =
      write_bash_replay(d, "replay.yaml",
                        "echo hello > /outdir/result.txt; ln -s /etc/passwd /outdir/link; echo x > "
                        "/outdir/junk.tmp; echo 42 > answer.txt");

  auto task = with_artifacts("arts",
                             "artifacts = [{ source = \"/outdir\", exclude = [\"*.tmp\"] }, "
                             "{ source = \"/work/answer.txt\", destination = \"answer-copy.txt\" }, \"/missing\"]\n",
                             // A hook that fails is a note; the next one still runs, before the copy.
                             "[[verifier.collect]]\ncommand = \"exit 4\"\n"
                             "[[verifier.collect]]\ncommand = \"echo collected > /outdir/hook.txt\"\n");
  auto r = rig.replay_graded(task, replay);
  CAPTURE(r.verifier_output);
  CHECK(r.grade.components.at("reward.seen") == 1.0);      // outside the workspace, declared: it reached the verifier
  CHECK(r.verifier_output.find("owner=1000;") != std::string::npos);  // as the agent's
  CHECK(r.grade.components.at("reward.link") == 0.0);      // a link is never followed nor copied
  CHECK(r.grade.components.at("reward.excluded") == 0.0);

  TempFiles out_dir("forgectl-harbor-art-out-");
  auto run = results::RunDir::open(out_dir.dir(), [](std::string_view t) { return std::string(t); });
  REQUIRE(run.has_value());
  REQUIRE(trial::write_trial_files(*run, r, "").has_value());
  const fs::path arts = fs::path(out_dir.dir()) / "trials" / "arts" / "0" / "logs" / "artifacts";
  std::ifstream res(arts / "outdir" / "result.txt");
  CHECK(std::string((std::istreambuf_iterator<char>(res)), {}) == "hello\n");
  std::ifstream copy(arts / "answer-copy.txt");
  CHECK(std::string((std::istreambuf_iterator<char>(copy)), {}) == "42\n");
  std::ifstream hook(arts / "outdir" / "hook.txt");
  CHECK(std::string((std::istreambuf_iterator<char>(hook)), {}) == "collected\n");  // [[verifier.collect]] ran first
  CHECK_FALSE(fs::exists(arts / "outdir" / "link"));
  CHECK_FALSE(fs::exists(arts / "outdir" / "junk.tmp"));

  // Undeclared, the same file stays behind: the verifier holds only the workspace.
  auto plain = with_artifacts("noarts", "");
  auto p = rig.replay_graded(plain, replay);
  CHECK(p.grade.components.at("reward.seen") == 0.0);
  CHECK(rig.left_nothing());
}

TEST_CASE(
    "harbor cli: forgectl run on a dataset mixing a Harbor and a Tolokaforge task; oracle passes both, noop neither") {
  HarborRig rig;  // the tag the Harbor task builds FROM, and the built image's removal
  TempFiles d("forgectl-harbor-cli-");
  const std::string dataset = d.dir() + "/dataset";
  auto harbor = load(write_task(d, "dataset/harbor-answer", rig.base));
  rig.runner_tag(harbor);
  d.write(
      "dataset/tf-answer/task.yaml",
      "task_id: tf_answer\nname: \"Write the answer\"\ncategory: files\ndescription: \"Write answer.txt with 42.\"\n"
      "initial_user_message: \"Write 42 to answer.txt, then say 'done now'.\"\n"
      "tools:\n  agent:\n    enabled: [write_file]\n  user:\n    enabled: []\n"
      "user_simulator:\n  mode: scripted\n  scripted_flow:\n"
      "    - {if_assistant_contains: \"done now\", user: \"Thanks. ###STOP###\"}\n    - {default: \"###STOP###\"}\n"
      "grading: grading.yaml\n"
      "solution:\n  tool_calls:\n    - {name: write_file, arguments: {path: answer.txt, content: \"42\\n\"}}\n"
      "  final_message: \"done now\"\n");
  d.write(
      "dataset/tf-answer/grading.yaml",
      "combine:\n  method: weighted\n  weights: {state_checks: 1.0}\n  pass_threshold: 0.8\n"
      "state_checks:\n  jsonpaths:\n    - {path_glob: \"/env/fs/agent-visible/answer.txt\", contains_ci: \"42\"}\n");
  d.write("dataset/README.md", "Two tasks of two formats.\n");

  auto records = [](const std::string& out) {
    auto log = results::read_trials_jsonl(out + "/trials.jsonl");
    REQUIRE_MESSAGE(log.has_value(), (log ? "" : log.error().what()));
    std::map<std::string, results::TrialRecord> by_task;
    for (const auto& r : log->trials) by_task[r.task_id] = r;
    return by_task;
  };
  auto oracle = run_forgectl({"run", dataset, "--agent", "oracle", "--out", d.dir() + "/oracle"}, Millis(400000));
  REQUIRE(oracle.has_value());
  CHECK_MESSAGE(oracle->code == 0, oracle->text());
  auto o = records(d.dir() + "/oracle");
  REQUIRE(o.size() == 2);
  REQUIRE(o.count("harbor-answer"));
  REQUIRE(o.count("tf_answer"));
  for (const auto& [id, r] : o) {
    CAPTURE(id);
    CHECK(r.graded());
    CHECK(r.score == 1.0);
  }

  auto noop = run_forgectl({"run", dataset, "--agent", "noop", "--out", d.dir() + "/noop"}, Millis(400000));
  REQUIRE(noop.has_value());
  CHECK_MESSAGE(noop->code == 0, noop->text());  // every trial graded: failed tasks are results, not errors
  CHECK(noop->out.find("0/2 graded trials passed") != std::string::npos);
  auto n = records(d.dir() + "/noop");
  REQUIRE(n.size() == 2);
  for (const auto& [id, r] : n) {
    CAPTURE(id);
    CHECK(r.graded());
    CHECK(r.score == 0.0);
  }
  CHECK(noop->out.find("leak audit: nothing of run") != std::string::npos);
}

namespace {

// A two-step Harbor task: step "one" asks for step1.txt, step "two" for step2.txt (with step1.txt
// still there: one environment). tests/lib.sh is the task's shared helper; each step's own
// tests/test.sh uses it; step two's tests carry a file named so an agent could look for it.
std::string write_steps_task(const TempFiles& d, const std::string& name, const std::string& base,
                             const std::string& strategy, const std::string& step_one_extra = "") {
  d.write(name + "/task.toml",
          "schema_version = \"1.3\"\nmulti_step_reward_strategy = \"" + strategy +
              "\"\n[task]\nname = \"forgectl-test/" + name +
              "\"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n"
              "[environment]\nnetwork_mode = \"no-network\"\nmemory_mb = 512\n"
              "[[steps]]\nname = \"one\"\n" + step_one_extra +
              "[[steps]]\nname = \"two\"\n[steps.verifier]\ntimeout_sec = 30\n");
  write_harbor_dockerfile(d, name, base);
  d.write(name + "/tests/lib.sh",
          "reward() { if [ \"$(cat \"$1\" 2>/dev/null)\" = \"$2\" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt; }\n");
  d.write(name + "/tests/test.sh", "echo 0 > /logs/verifier/reward.txt\n");  // overridden by each step's
  d.write(name + "/steps/one/instruction.md", "Write 'one' to step1.txt.\n");
  d.write(name + "/steps/one/tests/test.sh", ". /tests/lib.sh; reward step1.txt one\n");
  d.write(name + "/steps/one/solution/solve.sh", "echo one > step1.txt\n");
  d.write(name + "/steps/two/instruction.md", "Write 'two' to step2.txt.\n");
  d.write(name + "/steps/two/tests/test.sh",
          ". /tests/lib.sh; [ -f /tests/step2-only-marker.txt ] && [ \"$(cat step1.txt)\" = one ] && reward step2.txt two "
          "|| echo 0 > /logs/verifier/reward.txt\n");
  d.write(name + "/steps/two/tests/step2-only-marker.txt", "step two's tests\n");
  d.write(name + "/steps/two/solution/solve.sh", "echo two > step2.txt\n");
  return d.dir() + "/" + name;
}

}  // namespace

TEST_CASE("harbor steps: the oracle passes both steps in one environment; each step's reward is a component") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-steps-");
  auto task = load(write_steps_task(d, "two-steps", rig.base, "mean"));
  rig.runner_tag(task);
  auto r = rig.run(task, trial::AgentChoice::Kind::kOracle);
  CAPTURE(r.error);
  for (const auto& why : r.grade.reasons) CAPTURE(why);
  REQUIRE(r.outcome == results::Outcome::kGraded);
  CHECK(r.grade.components.at("step.one") == 1.0);
  CHECK(r.grade.components.at("step.two") == 1.0);
  CHECK(r.grade.score == 1.0);
  CHECK(r.grade.binary_pass);
  CHECK(r.tool_log.size() == 2);  // solve.sh once per step
  // Each step's verifier logs under logs/steps/<name>/.
  auto logs = log_files(r);
  CHECK(logs.count("steps/one/verifier/reward.txt"));
  CHECK(logs.count("steps/two/verifier/reward.txt"));
}

TEST_CASE("harbor steps: an agent solving step one only scores 0.5 by mean, 0 by final; no step's tests reach it") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-steps-");
  // The same call at each step: it solves step one, and looks for any test file it could see.
  const std::string replay = write_bash_replay(
      d, "replay.yaml",
      "echo one > step1.txt; [ -e /tests ] && echo tests-present; [ -e /logs/verifier ] && echo verifier-present; "
      "find / -xdev -name \"step2-only*\" 2>/dev/null; echo probed");
  for (const std::string strategy : {"mean", "final"}) {
    CAPTURE(strategy);
    auto task = load(write_steps_task(d, "half-" + strategy, rig.base, strategy));
    rig.runner_tag(task);
    auto r = rig.replay_graded(task, replay);
    CHECK(r.grade.components.at("step.one") == 1.0);
    CHECK(r.grade.components.at("step.two") == 0.0);
    CHECK(r.grade.score == (strategy == "mean" ? 0.5 : 0.0));
    CHECK_FALSE(r.grade.binary_pass);
    REQUIRE(r.tool_log.size() == 2);  // the probe ran in step one's and step two's agent phase
    for (const auto& call : r.tool_log) {
      const std::string& out = call.record.content;
      CAPTURE(out);
      CHECK(out.find("probed") != std::string::npos);
      CHECK(out.find("tests-present") == std::string::npos);
      CHECK(out.find("verifier-present") == std::string::npos);
      CHECK(out.find("step2-only") == std::string::npos);
    }
  }
}

TEST_CASE("harbor steps: a step short of its min_reward ends the trial; the steps not run score 0") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-steps-");
  auto task = load(write_steps_task(d, "gated", rig.base, "mean", "min_reward = 1.0\n"));
  rig.runner_tag(task);
  auto r = rig.run(task, trial::AgentChoice::Kind::kNoop);
  CAPTURE(r.error);
  REQUIRE(r.outcome == results::Outcome::kGraded);
  CHECK(r.grade.components.at("step.one") == 0.0);
  CHECK(r.grade.components.at("step.two") == 0.0);
  CHECK(r.grade.score == 0.0);
  bool said = false;
  for (const auto& why : r.grade.reasons)
    said = said || why.find("the remaining 1 step(s) were not run and score 0") != std::string::npos;
  CHECK(said);
}

// The cheat: step one's gate is a key (style) the agent can choose to miss. It does step one and
// leaves style out, so step two never runs. Were the steps not run left out of the mean (Harbor's
// rule), it would score 1 and pass without doing step two; the honest control does both steps.
TEST_CASE("harbor steps: missing a gate on purpose does not make the skipped steps count for nothing") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-steps-");
  const std::string dir = write_steps_task(d, "gate-dodge", rig.base, "mean", "min_reward = { style = 1.0 }\n");
  d.write("gate-dodge/steps/one/tests/test.sh",
          "r=0; [ \"$(cat step1.txt 2>/dev/null)\" = one ] && r=1; s=0; [ -f style.txt ] && s=1; "
          "printf '{\"reward\": %s, \"style\": %s}' $r $s > /logs/verifier/reward.json\n");
  d.write("gate-dodge/steps/one/solution/solve.sh", "echo one > step1.txt; touch style.txt\n");
  auto task = load(dir);
  rig.runner_tag(task);
  auto cheat = rig.replay_graded(task, write_bash_replay(d, "replay.yaml", "echo one > step1.txt"));
  CHECK(cheat.grade.components.at("step.one") == 1.0);
  CHECK(cheat.grade.components.at("step.two") == 0.0);
  CHECK(cheat.grade.score == doctest::Approx(0.5));
  CHECK_FALSE(cheat.grade.binary_pass);
  auto honest = rig.run(task, trial::AgentChoice::Kind::kOracle);
  CAPTURE(honest.error);
  REQUIRE(honest.outcome == results::Outcome::kGraded);
  CHECK(honest.grade.score == 1.0);
  CHECK(honest.grade.binary_pass);
}

TEST_CASE("harbor shared verifier: the tests run in the agent's runner as the verifier, after the agent") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-shared-");
  // reward.json: the answer and whether the agent's /tmp is the verifier's; the output: who the tests ran as.
  auto task = load(write_task(
      d, "shared", rig.base,
      "ok=0; grep -q 42 answer.txt 2>/dev/null && ok=1; seen=0; [ -e /tmp/agent-left ] && seen=1; "
      "echo \"uid=$(id -u);\"; printf '{\"reward\": %s, \"sees_agent_tmp\": %s}' $ok $seen > /logs/verifier/reward.json\n"));
  rig.runner_tag(task);
  const std::string replay = write_bash_replay(d, "replay.yaml", "echo 42 > answer.txt; echo x > /tmp/agent-left");
  rig.cfg.harbor_shared_verifier = true;
  auto shared = rig.replay_graded(task, replay);
  CHECK(shared.grade.score == 1.0);
  CHECK(shared.grade.components.at("reward.sees_agent_tmp") == 1.0);  // the agent's own container
  CHECK(shared.verifier_output.find("uid=2000;") != std::string::npos);
  auto noop = rig.run(task, trial::AgentChoice::Kind::kNoop);
  REQUIRE(noop.outcome == results::Outcome::kGraded);
  CHECK(noop.grade.score == 0.0);

  rig.cfg.harbor_shared_verifier = false;  // the default: a fresh container, which the agent's /tmp never reaches
  auto separate = rig.run(task, trial::AgentChoice::Kind::kReplay, replay);
  REQUIRE(separate.outcome == results::Outcome::kGraded);
  CHECK(separate.grade.score == 1.0);
  CHECK(separate.grade.components.at("reward.sees_agent_tmp") == 0.0);
}

TEST_CASE("harbor verifier HOME: the tests get a HOME of their own to install into; the agent's cannot write it") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-home-");
  // reward.json: the tests installing a tool under $HOME/.local/bin and running it; whether a
  // program run as the agent could write into it. The output: the HOME's owner and mode.
  auto task = load(write_task(
      d, "home", rig.base,
      "inst=0; mkdir -p \"$HOME/.local/bin\" && printf '#!/bin/sh\\necho ok\\n' > \"$HOME/.local/bin/tool\" && "
      "chmod +x \"$HOME/.local/bin/tool\" && [ \"$(\"$HOME/.local/bin/tool\")\" = ok ] && inst=1; "
      "agent=0; $FORGECTL_AS_AGENT sh -c 'echo x > \"$HOME/planted\"' 2>/dev/null && agent=1; "
      "echo \"owner=$(stat -c %u \"$HOME\") mode=$(stat -c %a \"$HOME\");\"; "
      "printf '{\"reward\": %s, \"agent_wrote\": %s, \"is_ours\": %s}' $inst $agent "
      "$([ \"$HOME\" = /forgectl-verifier-home ] && echo 1 || echo 0) > /logs/verifier/reward.json\n"));
  rig.runner_tag(task);
  for (bool shared : {false, true}) {
    CAPTURE(shared);
    rig.cfg.harbor_shared_verifier = shared;
    auto r = rig.run(task, trial::AgentChoice::Kind::kOracle);
    CAPTURE(r.error);
    REQUIRE(r.outcome == results::Outcome::kGraded);
    CHECK(r.grade.score == 1.0);
    CHECK(r.grade.components.at("reward.is_ours") == 1.0);
    CHECK(r.verifier_output.find("owner=2000 mode=700;") != std::string::npos);
    // Separate only: the shared verifier has no as-agent service ($FORGECTL_AS_AGENT is unset there).
    if (!shared) CHECK(r.grade.components.at("reward.agent_wrote") == 0.0);
  }
  CHECK(rig.left_nothing());
}

TEST_CASE("harbor cli: --harbor-verifier shared warns once; --resume alone reuses it and --env-passthrough") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-resume-");
  const std::string dir = write_task(d, "greet", rig.base,
                                     "if [ \"$GREETING\" = hello ] && grep -q 42 answer.txt; then echo 1; else echo 0; fi "
                                     "> /logs/verifier/reward.txt\n");
  d.write("greet/task.toml",
          "version = \"1.0\"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n"
          "[environment]\nnetwork_mode = \"no-network\"\nmemory_mb = 512\nenv = { GREETING = \"${FORGECTL_T_GREETING}\" }\n");
  rig.runner_tag(load(dir));
  const std::string out = d.dir() + "/out";
  const std::map<std::string, std::string> host = {{"FORGECTL_T_GREETING", "hello"}};
  auto first = run_forgectl({"run", dir, "--agent", "oracle", "--out", out, "--env-passthrough", "FORGECTL_T_GREETING",
                             "--harbor-verifier", "shared"},
                            Millis(400000), host);
  REQUIRE(first.has_value());
  CHECK_MESSAGE(first->code == 0, first->text());
  const std::string warning = "--harbor-verifier shared: 1 Harbor task(s) run their tests in the agent's own container";
  const auto at = first->err.find(warning);
  CHECK(at != std::string::npos);
  CHECK(first->err.find(warning, at + 1) == std::string::npos);  // once per run
  auto log = results::read_trials_jsonl(out + "/trials.jsonl");
  REQUIRE(log.has_value());
  REQUIRE(log->trials.size() == 1);
  CHECK(log->trials[0].score == 1.0);  // the variable reached the shared verifier
  auto rj = results::RunJson::read(out + "/run.json");
  REQUIRE(rj.has_value());
  CHECK(rj->invocation.env_passthrough == std::vector<std::string>{"FORGECTL_T_GREETING"});
  CHECK(rj->invocation.harbor_verifier == "shared");

  // Without the flags, --resume takes them from run.json: the preflight passes (it would refuse
  // the template otherwise), the finished trial is kept, and the warning says the mode again.
  auto resumed = run_forgectl({"run", "--resume", "--out", out}, Millis(400000), host);
  REQUIRE(resumed.has_value());
  CHECK_MESSAGE(resumed->code == 0, resumed->text());
  CHECK(resumed->err.find("is not passed to this run") == std::string::npos);
  CHECK(resumed->err.find(warning) != std::string::npos);
  auto again = results::read_trials_jsonl(out + "/trials.jsonl");
  REQUIRE(again.has_value());
  CHECK(again->trials.size() == 1);
}
