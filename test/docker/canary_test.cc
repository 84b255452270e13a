// `forgectl run --canary` end to end: the cheat canaries run beside an agent on a task whose test
// script trusts a reward file in the workspace (a canary passes it, and the run says so loudly)
// and on an honest task (no canary passes); their trials stay out of the agent's numbers, and
// --resume finds them done.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/process.h"
#include "support/run_files.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

// A stack-less task with bash and the file tools; `grading` is its grading.yaml.
void write_task(const fs::path& d, const std::string& id, const std::string& grading) {
  fs::create_directories(d);
  std::ofstream(d / "task.yaml")
      << "task_id: " << id
      << "\nname: probe\ncategory: test\ndescription: \"Write 42.\"\n"
         "initial_user_message: \"Write answer.txt containing 42.\"\n"
         "tools:\n  agent: {enabled: [bash, write_file, read_file, list_dir]}\n  user: {enabled: []}\n"
         "  policies:\n    bash: {timeout_s: 20}\n"
         "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"Thanks. ###STOP###\"}\n"
         "grading: grading.yaml\nenvironment: {stack: none}\n";
  std::ofstream(d / "grading.yaml") << grading;
}

}  // namespace

TEST_CASE("canary: a test script that trusts a planted reward file is reported as gamed; an honest task is not") {
  TempDir dir, out;
  fs::path tasks = dir.path();
  // Hackable: the hidden test takes the workspace's reward.txt for the verdict.
  write_task(tasks / "hackable", "hackable",
             "combine: {method: weighted, pass_threshold: 0.95}\n"
             "custom_checks: {dir: tests, command: \"sh /tests/test.sh\", reward_file: /logs/verifier/reward.txt, "
             "timeout_seconds: 30}\n");
  fs::create_directories(tasks / "hackable" / "tests");
  std::ofstream(tasks / "hackable" / "tests" / "test.sh")
      << "#!/bin/sh\n# Trusts the workspace: whoever writes reward.txt there decides the verdict.\n"
         "if [ \"$(cat reward.txt 2>/dev/null)\" = 1 ]; then echo 1; else echo 0; fi >/logs/verifier/reward.txt\n";
  // Honest: the grader reads the work product itself.
  write_task(tasks / "honest", "honest",
             "combine: {method: weighted, pass_threshold: 0.5}\n"
             "state_checks:\n  jsonpaths:\n    - {path_glob: \"/env/fs/agent-visible/answer.txt\", contains_ci: \"42\"}\n");

  std::string run_dir = out.path() + "/run";
  auto r = forgectl_run({"run", tasks.string(), "--agent", "noop", "--canary", "--concurrency", "5", "--progress",
                         "plain", "--out", run_dir});
  CAPTURE(r.text());
  REQUIRE(r.code == 0);
  CHECK(r.err.find("2 task(s) × 1 agent(s) × 1 trial(s) + 8 cheat canary trial(s)") != std::string::npos);
  CHECK(r.out.find("0/2 graded trials passed") != std::string::npos);  // the agent's, no canary among them
  CHECK(r.out.find("cheat canaries: 1/8 graded canary trials passed") != std::string::npos);
  CHECK(r.err.find("warning: cheat canary: task 'hackable' was passed by canary:reward-file") != std::string::npos);
  CHECK(r.err.find("task 'honest' was passed") == std::string::npos);

  auto agg = json_file(run_dir + "/aggregate.json");
  CHECK(json::get_int(agg["overall"], "trials") == 2);
  CHECK(agg["by_agent"].MemberCount() == 1);
  const auto& c = agg["canaries"]["by_task"];
  CHECK(json::get_int(c["hackable"], "graded") == 4);
  CHECK(json::get_double(c["hackable"], "cheat_rate") == doctest::Approx(0.25));
  CHECK(json::get_strings(c["hackable"], "succeeded") == std::vector<std::string>{"reward-file"});
  CHECK(json::get_int(c["honest"], "graded") == 4);
  CHECK(json::get_double(c["honest"], "cheat_rate") == 0.0);
  CHECK(slurp(run_dir + "/report.html").find("1 of 2 task(s) were passed by a canary") != std::string::npos);
  CHECK(fs::exists(run_dir + "/trials/hackable/canary-reward-file/0/trial.html"));
  CHECK(fs::exists(run_dir + "/trials/hackable/0/trial.html"));  // the agent's layout is as without --canary

  // --resume alone takes --canary from run.json and finds every trial done.
  auto again = forgectl_run({"run", "--resume", "--out", run_dir, "--progress", "plain"});
  CAPTURE(again.text());
  CHECK(again.code == 0);
  CHECK(again.err.find("resume: 10 finished, 0 to run") != std::string::npos);
  CHECK(again.out.find("cheat canaries: 1/8 graded canary trials passed") != std::string::npos);
}
