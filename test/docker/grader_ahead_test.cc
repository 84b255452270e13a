// Graders prepared ahead, through the forgectl binary against the real daemon: each trial's grader
// of a task's test scripts is made while the trial's agent runs (trials.jsonl's ahead_grader), and
// holds that trial's workspace alone — the tests pass only when exactly one agent's marker file is
// there, so a grader holding another trial's files would fail the oracle.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>

#include "results/trial_record.h"
#include "support/process.h"
#include "support/run_files.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

// The oracle leaves one marker file of a random name; the tests count the markers in the copy.
std::string write_marker_task(const TempDir& dir) {
  fs::path t = fs::path(dir.path()) / "tasks" / "one-marker";
  fs::create_directories(t / "tests");
  fs::create_directories(t / "solution");
  auto put = [&](const std::string& name, const std::string& text) { std::ofstream(t / name) << text; };
  put("solution/solve.sh", "touch \"marker-$(cat /proc/sys/kernel/random/uuid)\"\n");
  put("tests/test.sh",
      "n=$(ls -A | grep -c '^marker-')\n"
      "echo \"markers: $n\"; ls -A\n"
      "if [ \"$n\" = 1 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n");
  put("task.yaml",
      "task_id: one_marker\nname: marker\ncategory: test\ndescription: \"Leave a marker.\"\n"
      "initial_user_message: \"Leave a marker file.\"\nmax_turns: 5\nenvironment:\n  stack: none\n"
      "tools:\n  agent:\n    enabled: [bash]\n  user:\n    enabled: []\n"
      "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"Thanks. ###STOP###\"}\n"
      "grading: grading.yaml\nsolution:\n  script: solution/solve.sh\n  final_message: \"Done.\"\n");
  put("grading.yaml",
      "combine: {method: weighted, pass_threshold: 0.99}\n"
      "custom_checks:\n  dir: tests\n  command: \"sh /tests/test.sh\"\n  reward_file: /logs/verifier/reward.txt\n"
      "  timeout_seconds: 60\n");
  return t.string();
}

}  // namespace

TEST_CASE("grader ahead: each trial's grader is made ahead and holds that trial's files alone") {
  TempDir dir;
  std::string task = write_marker_task(dir);
  std::string out = dir.path() + "/run";
  auto r = forgectl_run({"run", task, "--agent", "oracle", "--agent", "noop", "--trials", "3", "--concurrency", "2",
                         "--out", out});
  REQUIRE_MESSAGE(r.code == 0, r.text());
  auto trials = trials_of(out);
  REQUIRE(trials.size() == 6);
  for (const auto& t : trials) {
    CHECK_MESSAGE(t.phases_s.count("ahead_grader") == 1, t.agent, " ", t.trial_index);
    // One marker for the oracle's (its own), none for noop's: never another trial's.
    CHECK_MESSAGE(t.binary_pass == (t.agent == "oracle"), t.agent, " ", t.trial_index, " ", t.score);
  }
  CHECK(r.out.find("leak audit: nothing of run") != std::string::npos);
}
