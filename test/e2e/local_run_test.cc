// `forgectl run` on the local executor, through the real binary ($FORGECTL_BIN) and without any
// Docker engine (DOCKER_HOST names a socket that does not exist): the oracle passes, every line
// of trials.jsonl says unconfined, the warning comes once for the whole run, no API key reaches a
// command, and neither a sandbox directory nor a process the agent started is left behind.
#include <doctest/doctest.h>

#include <csignal>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <yaml-cpp/yaml.h>

#include "core/json.h"
#include "results/trial_record.h"
#include "support/manifest_helpers.h"
#include "support/process.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

constexpr const char* kWarning = "THE LOCAL EXECUTOR RUNS TOOL COMMANDS ON THIS HOST";

// A task with no executor of its own (the run's --executor local decides) whose oracle writes
// the answer, shows its environment, and leaves a daemon running that escaped its process group.
std::string write_task(const TempFiles& t) {
  t.write("tasks/answer/fixtures/question.txt", "What is six times seven?\n");
  t.write("tasks/answer/solution/solve.sh",
          "cat question.txt; echo 42 > answer.txt; env\n"
          "setsid sh -c 'echo $$ > daemon.pid; exec sleep 613' > /dev/null 2>&1 < /dev/null &\n"
          "while [ ! -s daemon.pid ]; do sleep 0.05; done; echo \"daemon=$(cat daemon.pid)\"\n");
  t.write("tasks/answer/grading.yaml",
          "state_checks:\n  jsonpaths:\n    - {path_glob: \"/env/fs/agent-visible/answer.txt\", contains: \"42\"}\n");
  t.write("tasks/answer/task.yaml", R"(task_id: answer_local
name: "Answer on the host"
category: local
description: "Write answer.txt with bash."
initial_user_message: "Answer question.txt in answer.txt."
initial_state:
  filesystem:
    copy:
      - {from: fixtures/question.txt, to: /work/question.txt}
tools:
  agent: {enabled: [bash, read_file, write_file]}
user_simulator:
  mode: scripted
  scripted_flow:
    - {default: "###STOP###"}
grading: grading.yaml
solution:
  script: solution/solve.sh
)");
  return t.file("tasks/answer");
}

std::map<std::string, std::string> no_docker_env() {
  return {{"DOCKER_HOST", "unix:///nonexistent/forgectl-e2e/docker.sock"},
          {"OPENAI_API_KEY", "sk-e2e-never-seen-7788"}};
}

int count(const std::string& text, const std::string& part) {
  int n = 0;
  for (auto p = text.find(part); p != std::string::npos; p = text.find(part, p + 1)) ++n;
  return n;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("run --executor local: 3 oracle trials pass with no Docker engine, unconfined, one warning, nothing left") {
  TempFiles t("forgectl-e2e-local-");
  std::string task = write_task(t), out = t.file("run");
  auto r = forgectl_run(
      {"run", task, "--agent", "oracle", "--trials", "3", "--executor", "local", "--out", out, "--progress", "plain"},
      Millis(120000), no_docker_env());
  INFO(r.text());
  REQUIRE(r.code == 0);
  CHECK(count(r.err, kWarning) == 1);
  CHECK(r.err.find("cosmetic while bash exists") != std::string::npos);
  CHECK(r.err.find(kWarning) < r.err.find("[1/3]"));  // before the first trial
  CHECK(r.out.find("unconfined (host executor)") != std::string::npos);
  CHECK(r.out.find("it used no Docker engine") != std::string::npos);

  auto log = results::read_trials_jsonl(out + "/trials.jsonl");
  REQUIRE_MESSAGE(log.has_value(), (log ? "" : log.error().what()));
  REQUIRE(log->trials.size() == 3);
  for (const auto& rec : log->trials) {
    CHECK(rec.graded());
    CHECK(rec.binary_pass);
    CHECK(rec.unconfined);
    CHECK(rec.raw_line.find("\"unconfined\":true") != std::string::npos);
  }
  auto run_json = json::parse(read(out + "/run.json"), "run.json");
  REQUIRE(run_json.has_value());
  CHECK(json::get_string(*run_json, "executor") == "local");
  CHECK(json::get_string(*json::get_object(*run_json, "invocation"), "executor") == "local");
  CHECK(read(out + "/report.html").find("unconfined (host executor)") != std::string::npos);

  CHECK_FALSE(fs::exists(out + "/local"));  // every sandbox removed after grading
  // Tolokaforge's files: the run's aggregate, and each trial's env.yaml with the answer as grading
  // read it from the sandbox (the initial file apart) and its logs.yaml.
  auto tf = json::parse(read(out + "/tolokaforge/aggregate.json"), "tolokaforge/aggregate.json");
  REQUIRE(tf.has_value());
  CHECK(json::get_int(*tf, "total_trials") == 3);
  CHECK(json::get_double(*tf, "success_rate_micro") == doctest::Approx(1.0));
  YAML::Node env = YAML::LoadFile(out + "/trials/answer_local/0/env.yaml");
  CHECK(env["filesystem"]["/env/fs/agent-visible/answer.txt"].as<std::string>() == "42\n");
  CHECK(env["initial_filesystem"]["/work/question.txt"].as<std::string>() == "What is six times seven?\n");
  YAML::Node logs = YAML::LoadFile(out + "/trials/answer_local/0/logs.yaml");
  CHECK(logs["total_logs"].as<std::size_t>() == logs["logs"].size());
  REQUIRE(logs["logs"].size() >= 2);
  CHECK(logs["logs"][logs["logs"].size() - 2]["message"].as<std::string>() == "graded: pass");
  CHECK(logs["logs"][logs["logs"].size() - 1]["message"].as<std::string>() == "phase down");
  std::string traj = read(out + "/trials/answer_local/0/trajectory.yaml");
  CHECK(traj.find("What is six times seven?") != std::string::npos);
  CHECK(traj.find("PATH=/usr/bin:/bin") != std::string::npos);
  CHECK(traj.find("OPENAI_API_KEY") == std::string::npos);
  CHECK(traj.find("sk-e2e-never-seen") == std::string::npos);
  // The daemons the oracle left (one per trial) went with their trials.
  for (const auto& rec : log->trials) {
    std::string tr = read(out + "/" + rec.trial_dir + "/trajectory.yaml");
    auto at = tr.rfind("daemon=");  // the output, after the command that prints it
    REQUIRE(at != std::string::npos);
    std::string pid = tr.substr(at + 7, tr.find('\n', at) - at - 7);
    REQUIRE(!pid.empty());
    CHECK_MESSAGE(read("/proc/" + pid + "/cmdline").find("613") == std::string::npos,
                  "process " << pid << " is still running");
  }
}

TEST_CASE(
    "run --executor local with FORGECTL_REQUIRE_CONTAINER=1: bash is a tool error, the trial is graded, no shell ran") {
  TempFiles t("forgectl-e2e-local-");
  std::string task = write_task(t), out = t.file("run");
  auto env = no_docker_env();
  env["FORGECTL_REQUIRE_CONTAINER"] = "1";
  auto r = forgectl_run({"run", task, "--agent", "oracle", "--executor", "local", "--out", out, "--progress", "plain"},
                        Millis(120000), env);
  INFO(r.text());
  REQUIRE(r.code == 0);  // graded (failed), not an error
  CHECK(count(r.err, kWarning) == 0);
  CHECK(count(r.err, "FORGECTL_REQUIRE_CONTAINER=1 refuses every host command") == 1);
  auto log = results::read_trials_jsonl(out + "/trials.jsonl");
  REQUIRE(log.has_value());
  REQUIRE(log->trials.size() == 1);
  CHECK(log->trials[0].graded());
  CHECK_FALSE(log->trials[0].binary_pass);
  CHECK(log->trials[0].tool_errors == 1);
  CHECK(read(out + "/trials/answer_local/0/trajectory.yaml")
            .find("shell commands on the local executor are disabled (FORGECTL_REQUIRE_CONTAINER=1)") !=
        std::string::npos);
}

TEST_CASE("run --executor local: a task with json-db fixtures is refused at preflight, naming it; nothing starts") {
  TempFiles t("forgectl-e2e-local-");
  write_task(t);
  t.write("tasks/db/grading.yaml", "transcript_rules:\n  must_contain: [done]\n");
  t.write("tasks/db/task.yaml", R"(task_id: with_db
name: n
category: c
description: d
initial_state:
  json_db: {orders: [{id: 1}]}
grading: grading.yaml
solution:
  final_message: done
)");
  std::string out = t.file("run");
  auto r = forgectl_run({"run", t.file("tasks"), "--agent", "oracle", "--executor", "local", "--out", out},
                        Millis(120000), no_docker_env());
  INFO(r.text());
  CHECK(r.code == 2);
  CHECK(r.err.find(
            "task with_db cannot run on the local executor: initial_state.json_db, which needs the json-db service") !=
        std::string::npos);
  CHECK(count(r.err, kWarning) == 0);
  CHECK_FALSE(fs::exists(out + "/trials.jsonl"));
}

TEST_CASE("run --executor local: after kill -9, --resume alone removes the dead run's sandbox and finishes the run") {
  TempFiles t("forgectl-e2e-local-");
  t.write("slow/fixtures/question.txt", "What is six times seven?\n");
  // Slow only while the host says so (the variable crosses in through env_passthrough).
  t.write("slow/solution/solve.sh", "if [ \"$E2E_SLOW\" = 1 ]; then sleep 5; fi; echo 42 > answer.txt\n");
  t.write("slow/grading.yaml", "state_checks:\n  jsonpaths:\n    - {path_glob: \"answer.txt\", contains: \"42\"}\n");
  t.write("slow/task.yaml", R"(task_id: slow_local
name: n
category: c
description: d
initial_user_message: "Answer."
environment:
  stack: none
  runner: {env_passthrough: [E2E_SLOW]}
tools:
  agent: {enabled: [bash]}
  executor: local
user_simulator: {mode: scripted, scripted_flow: [{default: "###STOP###"}]}
grading: grading.yaml
solution: {script: solution/solve.sh}
)");
  std::string out = t.file("run");
  auto env = no_docker_env();
  env["E2E_SLOW"] = "1";
  // A task file alone cannot ask for a host shell: refused before anything starts.
  auto refused =
      forgectl_run({"run", t.file("slow"), "--agent", "oracle", "--out", t.file("refused")}, Millis(120000), env);
  CHECK(refused.code == 2);
  CHECK(refused.err.find("--allow-local") != std::string::npos);
  CHECK_FALSE(fs::exists(t.file("refused") + "/trials.jsonl"));
  auto p = spawn_forgectl(
      {"run", t.file("slow"), "--agent", "oracle", "--allow-local", "--out", out, "--progress", "plain"}, env);
  REQUIRE(p.has_value());
  std::string sandbox = out + "/local/slow_local/0-1/work";
  for (int i = 0; i < 600 && !fs::exists(sandbox); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE_MESSAGE(fs::exists(sandbox), (*p)->err());
  (*p)->kill(SIGKILL);
  REQUIRE((*p)->wait_for(Millis(10000)).has_value());
  CHECK(fs::exists(sandbox));  // what a kill -9 leaves

  env["E2E_SLOW"] = "0";
  auto r = forgectl_run({"run", "--resume", "--out", out}, Millis(120000), env);
  INFO(r.text());
  REQUIRE(r.code == 0);
  CHECK(count(r.err, kWarning) == 1);
  auto log = results::read_trials_jsonl(out + "/trials.jsonl");
  REQUIRE(log.has_value());
  REQUIRE(log->trials.size() == 1);
  CHECK(log->trials[0].binary_pass);
  CHECK(log->trials[0].attempt == 2);
  CHECK(log->trials[0].unconfined);
  CHECK(r.out.find("leak audit: nothing of run") != std::string::npos);
  CHECK_FALSE(fs::exists(out + "/local"));
}
