// The agent exhausts the runner's memory until the kernel kills the task's Python tool server (it
// shares the runner's cgroup). Before the fix the unreadable server state was an infra error:
// retried, then left out of every rate — a failing agent could make its trials vanish. Now the
// trial is the agent's: graded, score 0. The oracle on the same task passes (the control).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "results/trial_record.h"
#include "support/process.h"
#include "support/run_files.h"
#include "support/scripted_trial.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

// examples/tasks/library-loans with bash for the agent and a small runner (so little memory is needed).
std::string oom_task(const TempDir& dir) {
  fs::path task = fs::path(dir.path()) / "library-loans";
  copy_example_task("library-loans", task.string());
  std::string yaml = slurp(task / "task.yaml");
  auto put_after = [&](const std::string& anchor, const std::string& text) {
    auto at = yaml.find(anchor);
    REQUIRE(at != std::string::npos);
    yaml.insert(at + anchor.size(), text);
  };
  put_after("  stack: none\n", "  runner: {memory: 48m, disk_mb: 16, tmp_mb: 16}\n");
  auto tools = yaml.find("checkout_book]");
  REQUIRE(tools != std::string::npos);
  yaml.replace(tools, std::string("checkout_book]").size(), "checkout_book, bash]");
  std::ofstream(task / "task.yaml") << yaml;
  return task.string();
}

results::TrialRecord only_trial(const std::string& out) {
  auto log = results::read_trials_jsonl(out + "/trials.jsonl");
  REQUIRE_MESSAGE(log.has_value(), (log ? "" : log.error().what()));
  REQUIRE(log->trials.size() == 1);
  return log->trials[0];
}

}  // namespace

TEST_CASE("attack: OOM-killing the task's Python server makes the trial the agent's failure, never an uncounted one") {
  TempDir dir, traj_dir;
  const std::string task = oom_task(dir);
  // 40 shells of 20 MB each in a runner capped at a few hundred MiB: the OOM killer takes the
  // largest process of the cgroup, the server.
  const std::string traj = write_trajectory(
      traj_dir, {{"", {{"bash", bash("for i in $(seq 1 40); do sh -c 'x=$(head -c 20000000 /dev/zero | tr \"\\000\" a); "
                                     "sleep 20' & sleep 0.3; done; sleep 6; echo pressed")}}},
                 {"", {{"search_books", R"({"query": "harbour"})"}}},
                 {"I could not do it.", {}}});
  auto cheat = run_forgectl({"run", task, "--agent", "replay:" + traj, "--out", dir.path() + "/cheat"}, Millis(600000));
  REQUIRE(cheat.has_value());
  CAPTURE(cheat->text());
  CHECK(cheat->code == 0);
  auto t = only_trial(dir.path() + "/cheat");
  CHECK(t.outcome == results::Outcome::kGraded);
  CHECK(t.attempt == 1);  // not retried
  CHECK_FALSE(t.binary_pass);
  // 0 when the kernel took the server (its state unreadable: every state check fails); under a
  // loaded host it may instead take one of the shells, and the trial is graded on what the agent
  // did (a search, no checkout: a fraction). Either way the agent's, never a pass.
  CHECK(t.score < 0.5);

  auto honest = run_forgectl({"run", task, "--agent", "oracle", "--out", dir.path() + "/oracle"}, Millis(600000));
  REQUIRE(honest.has_value());
  CAPTURE(honest->text());
  auto o = only_trial(dir.path() + "/oracle");
  CHECK(o.outcome == results::Outcome::kGraded);
  CHECK(o.binary_pass);
}
