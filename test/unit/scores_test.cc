// Scores outside [0, 1] (issue 34): every grader's score is checked, an out-of-range reward is
// the task's error naming its value, a trials.jsonl line with one is marked and never counted, no
// aggregate is ever infinite, one bad trial never stops the reports, and a crash while they are
// written ends the process with a message and exit code 1, not a signal.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <csignal>
#include <filesystem>
#include <limits>
#include <string>

#include "core/crash_note.h"
#include "core/files.h"
#include "core/json.h"
#include "grading/component.h"
#include "grading/python_checks.h"
#include "results/aggregate.h"
#include "results/metrics.h"
#include "results/report_files.h"
#include "results/trial_record.h"
#include "support/manifest_helpers.h"
#include "trial/harbor_trial.h"

using namespace forge;
namespace fs = std::filesystem;

namespace {

// One graded line; it passes when its score is 1.
std::string line(const std::string& task, int idx, const std::string& score, const std::string& extra = "") {
  return R"({"task_id":")" + task + R"(","trial_index":)" + std::to_string(idx) +
         R"(,"agent":"llm","outcome":"graded","binary_pass":)" + (score == "1" ? "true" : "false") + R"(,"score":)" +
         score + extra + "}";
}

}  // namespace

TEST_CASE("scores: a grader's score must be a finite number in [0, 1]") {
  CHECK(grading::check_score(0, "x").has_value());
  CHECK(grading::check_score(1, "x").has_value());
  CHECK(grading::check_score(0.5, "x").has_value());
  for (double bad : {1e308, -0.5, 1.0000001, std::numeric_limits<double>::infinity(), std::nan("")}) {
    auto st = grading::check_score(bad, "the reward");
    REQUIRE_FALSE(st);
    CHECK(st.error().code == Errc::kInvalid);
  }
  CHECK(grading::check_score(1e308, "the reward").error().message == "the reward is 1e+308, not a number in [0, 1]");
}

TEST_CASE("scores: reward.json keys and checks.py's score outside [0, 1] are the task's error, not a pass") {
  auto huge = trial::parse_reward_json(R"({"reward": 1e308})");
  REQUIRE_FALSE(huge);
  CHECK(huge.error().code == Errc::kInvalid);
  CHECK(huge.error().message == "reward.json: 'reward' is 1e+308, not a number in [0, 1]");
  auto extra = trial::parse_reward_json(R"({"reward": 1, "lines": 57})");
  REQUIRE_FALSE(extra);
  CHECK(extra.error().message == "reward.json: 'lines' is 57, not a number in [0, 1]");
  CHECK(trial::parse_reward_json(R"({"reward": -0.5})").error().code == Errc::kInvalid);
  // A key twice is no reward file: spoiled (kProtocol, reward 0), whichever value would have won.
  auto twice = trial::parse_reward_json(R"({"reward": 0, "reward": 1})");
  REQUIRE_FALSE(twice);
  CHECK(twice.error().code == Errc::kProtocol);
  // The control: in range, kept.
  CHECK(trial::parse_reward_json(R"({"reward": 0.5})").value().at("reward") == 0.5);

  auto five = grading::score_checks_result(R"({"status": "completed", "checks": [], "score": 5})");
  REQUIRE_FALSE(five);
  CHECK(five.error().code == Errc::kInvalid);
  CHECK(five.error().message == "the score checks.py gave is 5, not a number in [0, 1]");
  CHECK(grading::score_checks_result(R"({"status": "completed", "checks": [], "score": 0.5})").value().score == 0.5);
}

TEST_CASE("trials.jsonl: a line whose numbers cannot be counted is read, marked, and outside every rate and sum") {
  const std::string text = line("a", 0, "1") + "\n" + line("a", 1, "0.5") + "\n" + line("a", 2, "1e308") + "\n" +
                           line("a", 3, "-0.5") + "\n" + line("a", 4, "1", R"(,"cost_usd":1e308)") + "\n" +
                           line("a", 5, "1", R"(,"tokens_input":1e300)") + "\n";
  auto log = results::parse_trials_jsonl(text, "trials.jsonl");
  REQUIRE(log.has_value());
  REQUIRE(log->trials.size() == 6);
  CHECK(log->trials[0].invalid.empty());
  CHECK(log->trials[1].invalid.empty());
  CHECK(log->trials[2].invalid == "score 1e+308 is not a number in [0, 1]");
  CHECK_FALSE(log->trials[2].graded());
  CHECK(log->trials[3].invalid == "score -0.5 is not a number in [0, 1]");
  CHECK(log->trials[4].invalid == "cost_usd 1e+308 is not a number in [0, 1e+12]");
  CHECK(log->trials[4].cost_usd == 0);
  CHECK(log->trials[5].invalid.find("a count") == 0);

  std::vector<const results::TrialRecord*> all;
  for (const auto& t : log->trials) all.push_back(&t);
  auto s = results::summarize(all);
  CHECK(s.trials == 6);
  CHECK(s.graded == 2);
  CHECK(s.invalid == 4);
  CHECK(s.infra_errors == 0);
  CHECK(s.score.mean == doctest::Approx(0.75));
  CHECK(std::isfinite(s.cost_usd));
  auto agg = results::aggregate_json(log->trials);
  REQUIRE_MESSAGE(agg.has_value(), (agg ? "" : agg.error().what()));
  auto doc = json::parse(*agg, "aggregate.json");
  REQUIRE(doc.has_value());
  CHECK(json::get_int(*json::get_object(*doc, "overall"), "invalid_records") == 4);
}

TEST_CASE("reports: one trial's bad numbers never stop the run's reports; the bad one is marked") {
  test::TempFiles t("bad-score-run");
  const fs::path run = t.file("run");
  fs::create_directories(run / "trials/a/0");
  fs::create_directories(run / "trials/a/1");
  REQUIRE(write_file_atomic((run / "trials.jsonl").string(), line("a", 0, "1", R"(,"trial_dir":"trials/a/0")") + "\n" +
                                                                 line("a", 1, "1e308", R"(,"trial_dir":"trials/a/1")") +
                                                                 "\n")
              .has_value());
  REQUIRE(results::write_reports(run.string()).has_value());
  CHECK(read_text(run / "report.html").value().find("invalid record") != std::string::npos);
  CHECK(read_text(run / "trials/a/1/trial.html").value().find("invalid record: score 1e+308") != std::string::npos);
  CHECK(read_text(run / "trials/a/0/trial.html").value().find("pass") != std::string::npos);
  CHECK(read_text(run / "aggregate.json").value().find("\"invalid_records\": 1") != std::string::npos);
}

TEST_CASE("json: a number that is not finite is written as null, never left out of the document") {
  json::Writer w;
  w.begin_array().num(std::numeric_limits<double>::infinity()).num(std::nan("")).num(0.5).end_array();
  CHECK(w.take() == "[null,null,0.5]");
}

TEST_CASE("crash note: a stack overflow while it lives ends the process with its message and exit code 1") {
  int err[2];
  REQUIRE(::pipe(err) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(err[1], STDERR_FILENO);
    CrashNote note("writing the reports of /r crashed; write them again with: forgectl report /r");
    // Unbounded recursion the optimiser cannot fold away: the very crash issue 29 found.
    struct Deep {
      static int down(int n) {
        volatile char frame[256];
        frame[0] = static_cast<char>(n);
        if (n < 0) return 0;  // never: n only grows, and the stack ends first
        return down(n + 1) + frame[0];
      }
    };
    ::_exit(Deep::down(0) == 42 ? 3 : 4);  // never reached
  }
  ::close(err[1]);
  std::string text;
  char buf[512];
  for (ssize_t n; (n = ::read(err[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  ::close(err[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK_FALSE(WIFSIGNALED(status));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(text ==
        "forgectl: error: writing the reports of /r crashed; write them again with: forgectl report /r "
        "(SIGSEGV)\n");

  // Once it is gone, the process's own dispositions are back.
  struct sigaction before {};
  ::sigaction(SIGSEGV, nullptr, &before);
  { CrashNote scoped("x"); }
  struct sigaction after {};
  ::sigaction(SIGSEGV, nullptr, &after);
  CHECK(reinterpret_cast<std::uintptr_t>(after.sa_handler) == reinterpret_cast<std::uintptr_t>(before.sa_handler));
}
