// Red team, a reward outside [0, 1] (issue 34): a Harbor verifier writing 1e308 to reward.txt made
// a do-nothing agent "pass" with that score, and the mean overflowed so that aggregate.json and
// report.html were never written. Now such a reward is the task's error (a setup error, its value
// named, outside every rate, never a pass) and the run's reports are written; a negative reward
// likewise. Beside them the honest controls: a reward of 1 passes, 0.5 scores 0.5. A trials.jsonl
// line with such a score (an older forgectl, a hand edit) is marked by `forgectl report`, never
// counted, and every report is still written.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "core/files.h"
#include "core/json.h"
#include "results/trial_record.h"
#include "support/harbor_rig.h"
#include "support/manifest_helpers.h"
#include "support/process.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

// A Harbor task whose verifier writes `reward` whatever the agent did. Every task's environment
// is the same, so the runner image is built once for all of them.
void write_reward_task(const TempFiles& d, const std::string& name, const std::string& base,
                       const std::string& reward) {
  d.write(name + "/task.toml",
          "version = \"1.0\"\n[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 60\n"
          "[environment]\nnetwork_mode = \"no-network\"\nmemory_mb = 512\n");
  d.write(name + "/instruction.md", "Do nothing.\n");
  d.write(name + "/environment/Dockerfile", "FROM " + base + "\nWORKDIR /work\nUSER 1000:1000\n");
  d.write(name + "/tests/test.sh", "echo '" + reward + "' > /logs/verifier/reward.txt\n");
}

std::map<std::string, results::TrialRecord> records(const std::string& out) {
  auto log = results::read_trials_jsonl(out + "/trials.jsonl");
  REQUIRE_MESSAGE(log.has_value(), (log ? "" : log.error().what()));
  std::map<std::string, results::TrialRecord> by_task;
  for (const auto& r : log->trials) by_task[r.task_id] = r;
  return by_task;
}

std::string read(const std::string& path) {
  auto t = read_text(path);
  REQUIRE_MESSAGE(t.has_value(), path);
  return *t;
}

}  // namespace

TEST_CASE("attack, rewards: 1e308 is the task's error with the run's reports written; 1 passes and 0.5 scores 0.5") {
  HarborRig rig;
  TempFiles d("forgectl-reward-range-");
  write_reward_task(d, "data/a_one", rig.base, "1");
  write_reward_task(d, "data/b_half", rig.base, "0.5");
  write_reward_task(d, "data/c_huge", rig.base, "1e308");
  rig.runner_tag(rig.load(d.dir() + "/data/a_one"));
  const std::string out = d.dir() + "/out";
  // One at a time, in task order: the two controls are graded before the third stops the run.
  auto run =
      run_forgectl({"run", d.dir() + "/data", "--agent", "noop", "--concurrency", "1", "--out", out}, Millis(400000));
  REQUIRE(run.has_value());
  CAPTURE(run->text());
  CHECK(run->code == 2);  // a setup error: the task's, not the model's, not an infra error
  CHECK(run->err.find("setup error in task c_huge") != std::string::npos);
  CHECK(run->err.find("the reward in /logs/verifier/reward.txt is 1e+308, not a number in [0, 1]") !=
        std::string::npos);

  auto by_task = records(out);
  CHECK(by_task.size() == 2);  // c_huge is in no rate: not recorded, rerun by --resume after the fix
  REQUIRE(by_task.count("a_one"));
  REQUIRE(by_task.count("b_half"));
  CHECK(by_task["a_one"].binary_pass);
  CHECK(by_task["a_one"].score == 1.0);
  CHECK_FALSE(by_task["b_half"].binary_pass);
  CHECK(by_task["b_half"].score == 0.5);

  // Every report is written, and says why the run stopped, with the value.
  auto agg = json::parse(read(out + "/aggregate.json"), "aggregate.json");
  REQUIRE(agg.has_value());
  CHECK(json::get_double(*json::get_object(*agg, "overall"), "mean_score") == doctest::Approx(0.75));
  const std::string html = read(out + "/report.html");
  CHECK(html.find("1e+308") != std::string::npos);
  CHECK(read(out + "/run.json").find("1e+308") != std::string::npos);
  CHECK(fs::exists(fs::path(out) / by_task["a_one"].trial_dir / "trial.html"));

  // A line an older forgectl could have written with that score is marked, not counted; every
  // report is written all the same.
  results::TrialRecord forged = by_task["a_one"];
  forged.trial_index = 7;
  forged.trial_key.clear();
  forged.trial_dir.clear();
  forged.score = 1e308;
  std::ofstream(out + "/trials.jsonl", std::ios::app) << results::to_json_line(forged) << "\n";
  fs::remove(fs::path(out) / "aggregate.json");
  fs::remove(fs::path(out) / "report.html");
  auto report = run_forgectl({"report", out}, Millis(60000));
  REQUIRE(report.has_value());
  CHECK_MESSAGE(report->code == 0, report->text());
  auto again = json::parse(read(out + "/aggregate.json"), "aggregate.json");
  REQUIRE(again.has_value());
  const json::Value* overall = json::get_object(*again, "overall");
  REQUIRE(overall);
  CHECK(json::get_int(*overall, "invalid_records") == 1);
  CHECK(json::get_int(*overall, "graded") == 2);
  CHECK(json::get_double(*overall, "mean_score") == doctest::Approx(0.75));
  CHECK(read(out + "/report.html").find("invalid record") != std::string::npos);
}

TEST_CASE("attack, rewards: a negative reward is the task's error too") {
  HarborRig rig;
  TempFiles d("forgectl-reward-negative-");
  write_reward_task(d, "data/d_negative", rig.base, "-0.5");
  rig.runner_tag(rig.load(d.dir() + "/data/d_negative"));
  const std::string out = d.dir() + "/out";
  auto run = run_forgectl({"run", d.dir() + "/data", "--agent", "noop", "--out", out}, Millis(300000));
  REQUIRE(run.has_value());
  CAPTURE(run->text());
  CHECK(run->code == 2);
  CHECK(run->err.find("the reward in /logs/verifier/reward.txt is -0.5, not a number in [0, 1]") != std::string::npos);
  CHECK((!fs::exists(fs::path(out) / "trials.jsonl") || records(out).empty()));
  CHECK(fs::exists(fs::path(out) / "report.html"));
  CHECK(fs::exists(fs::path(out) / "aggregate.json"));
}
