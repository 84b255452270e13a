// The combine rules, custom checks (test scripts), and grade() over every component at once.
// grade()'s errors (faults of grading, not of the model) are in grading_faults_test.cc.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "grading/combine.h"
#include "grading/grader.h"
#include "grading/test_scripts.h"

using namespace forge;
using namespace forge::grading;
using manifest::CombineMethod;

TEST_CASE("combine weighted: Σ w·s / Σ w over the configured components, default weight 1") {
  Combined even = combine(CombineMethod::kWeighted, {}, 0.8, {{"state_checks", 1.0}, {"transcript_rules", 0.5}});
  CHECK(even.score == doctest::Approx(0.75));
  CHECK(!even.pass);
  CHECK(even.reasons.back() ==
        "combine: weighted (1×state_checks 1 + 1×transcript_rules 0.5) / 2 = 0.75 < threshold 0.8: fail");

  // Weights of components that are not configured are ignored.
  Combined weighted = combine(CombineMethod::kWeighted, {{"state_checks", 3}, {"llm_judge", 5}}, 0.8,
                              {{"state_checks", 1.0}, {"transcript_rules", 0.2}});
  CHECK(weighted.score == doctest::Approx(0.8));  // (3 + 0.2) / 4
  CHECK(weighted.pass);

  // Rounded to 6 places: 2/3 is 0.666667, so a 0.666667 threshold passes.
  Combined thirds = combine(CombineMethod::kWeighted, {}, 0.666667, {{"a", 1.0}, {"b", 1.0}, {"c", 0.0}});
  CHECK(thirds.score == 0.666667);
  CHECK(thirds.pass);
}

TEST_CASE("combine weighted: zero and invalid weights") {
  Combined zero = combine(CombineMethod::kWeighted, {{"state_checks", 0}, {"llm_judge", 0}}, 0.5,
                          {{"state_checks", 1.0}, {"llm_judge", 1.0}});
  CHECK(zero.score == 0);
  CHECK(!zero.pass);
  CHECK(zero.reasons[0] == "combine: every configured component has weight 0: score 0");

  Combined negative = combine(CombineMethod::kWeighted, {{"llm_judge", -2}}, 0.5, {{"state_checks", 1.0}, {"llm_judge", 0.0}});
  CHECK(negative.score == 1);  // the judge's weight counts as 0
  CHECK(negative.reasons[0] == "combine: the weight of llm_judge (-2) is invalid; counted as 0");

  Combined nan = combine(CombineMethod::kWeighted, {{"llm_judge", std::nan("")}}, 0.5, {{"llm_judge", 1.0}});
  CHECK(nan.score == 0);
}

TEST_CASE("combine all / any: min and max against the threshold; nothing configured passes") {
  const std::map<std::string, double> scores = {{"state_checks", 0.9}, {"transcript_rules", 0.6}, {"llm_judge", 0.85}};
  Combined all = combine(CombineMethod::kAll, {{"state_checks", 10}}, 0.8, scores);
  CHECK(all.score == doctest::Approx(0.6));
  CHECK(!all.pass);
  CHECK(all.reasons.back() ==
        "combine: all min(llm_judge 0.85, state_checks 0.9, transcript_rules 0.6) = 0.6 < threshold 0.8: fail");
  CHECK(combine(CombineMethod::kAll, {}, 0.6, scores).pass);  // every component ≥ 0.6

  Combined any = combine(CombineMethod::kAny, {}, 0.8, scores);
  CHECK(any.score == doctest::Approx(0.9));
  CHECK(any.pass);
  CHECK(!combine(CombineMethod::kAny, {}, 0.95, scores).pass);

  Combined none = combine(CombineMethod::kAll, {}, 0.8, {});
  CHECK(none.score == 1);
  CHECK(none.pass);
  CHECK(none.reasons == std::vector<std::string>{"combine: no grading component is configured: score 1, pass"});

  CHECK(combine(CombineMethod::kWeighted, {}, 0.8, {{"state_checks", 0.8}}).pass);  // ≥, not >
}

TEST_CASE("custom checks: reward file, else exit code") {
  manifest::TestScripts cfg;
  cfg.present = true;
  cfg.reward_file = "/logs/verifier/reward.txt";
  auto with = [&](TestRun run) {
    Evidence ev;
    ev.run_tests = [run]() -> Result<TestRun> { return run; };
    auto r = run_test_scripts(cfg, ev);
    REQUIRE(r);
    return *r;
  };
  ComponentResult reward = with(TestRun{1, "2 of 4 tests failed", 0.5});
  CHECK(reward.score == doctest::Approx(0.5));  // the reward decides, whatever the exit code
  CHECK(reward.reasons[0] == R"(custom_checks: reward 0.5 from "/logs/verifier/reward.txt", exit code 1)");
  // Outside [0, 1] the reward is the task's error (kInvalid: a setup error), never clamped into a pass.
  for (double bad : {1.7, -0.5, 1e308, std::numeric_limits<double>::infinity()}) {
    CAPTURE(bad);
    Evidence ev;
    ev.run_tests = [bad]() -> Result<TestRun> { return TestRun{0, "", bad}; };
    auto r = run_test_scripts(cfg, ev);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::kInvalid);
    CHECK(r.error().message.find("not a number in [0, 1]") != std::string::npos);
  }

  ComponentResult passed = with(TestRun{0, "ok", std::nullopt});
  CHECK(passed.score == 1);
  CHECK(passed.reasons[0] == R"(custom_checks: PASS: exit code 0 (no value in reward file "/logs/verifier/reward.txt"))");
  ComponentResult no_reward = with(TestRun{1, "crashed before writing the reward", std::nullopt});
  CHECK(no_reward.score == 0);
  CHECK(no_reward.reasons[0] ==
        R"(custom_checks: FAIL: exit code 1 (no value in reward file "/logs/verifier/reward.txt"); )"
        R"(output: "crashed before writing the reward")");
  cfg.reward_file.clear();
  ComponentResult failed = with(TestRun{2, "AssertionError: expected 3\n", std::nullopt});
  CHECK(failed.score == 0);
  CHECK(failed.reasons[0] == R"(custom_checks: FAIL: exit code 2; output: "AssertionError: expected 3\n")");
}

TEST_CASE("custom checks: a run that timed out or was killed scores 0, and its reward does not count") {
  manifest::TestScripts cfg;
  cfg.present = true;
  cfg.reward_file = "/logs/verifier/reward.txt";
  auto with = [&](TestRun run) {
    Evidence ev;
    ev.run_tests = [run]() -> Result<TestRun> { return run; };
    auto r = run_test_scripts(cfg, ev);
    REQUIRE(r);
    return *r;
  };
  ComponentResult timeout = with(TestRun{-1, "", std::nullopt, true});
  CHECK(timeout.score == 0);
  CHECK(timeout.reasons[0] == R"(custom_checks: FAIL: timed out after 300 s; output: "")");

  // The script wrote 1 and was then killed: only a script that exits on its own gives a verdict.
  ComponentResult oom = with(TestRun{137, "Killed", 1.0});
  CHECK(oom.score == 0);
  CHECK(oom.reasons[0] == R"(custom_checks: FAIL: killed by signal 9 (exit code 137); the reward 1 from )"
                          R"("/logs/verifier/reward.txt" does not count; output: "Killed")");
  CHECK(with(TestRun{-1, "", 1.0, true}).score == 0);
  CHECK(with(TestRun{143, "", std::nullopt}).reasons[0] ==
        R"(custom_checks: FAIL: killed by signal 15 (exit code 143); output: "")");
  CHECK(with(TestRun{-1, "", std::nullopt}).reasons[0] ==
        R"(custom_checks: FAIL: killed: the test process ended without an exit code; output: "")");

  CHECK(signal_from_exit_code(137) == 9);
  CHECK(!signal_from_exit_code(128));
  CHECK(!signal_from_exit_code(1));
  CHECK(!signal_from_exit_code(255));
}

TEST_CASE("custom checks: a run that could not start, or no grader, is an error with its code") {
  manifest::TestScripts cfg;
  cfg.present = true;
  Evidence ev;
  ev.run_tests = []() -> Result<TestRun> { return fail(Errc::kUnavailable, "docker daemon unreachable"); };
  auto error = run_test_scripts(cfg, ev);
  REQUIRE(!error);
  CHECK(error.error().code == Errc::kUnavailable);
  CHECK(error.error().what() == "the tests could not run: docker daemon unreachable");

  Evidence none;
  auto no_grader = run_test_scripts(cfg, none);
  REQUIRE(!no_grader);
  CHECK(no_grader.error().code == Errc::kUnsupported);
  CHECK(no_grader.error().what() == R"(no grader container is available to run "sh tests/test.sh")");
}

namespace {

// Every component configured, with evidence that passes all of them.
manifest::GradingConfig full_config() {
  manifest::GradingConfig c;
  c.path = "/tasks/refund/grading.yaml";
  c.weights = {{"state_checks", 2}, {"transcript_rules", 1}, {"llm_judge", 1}, {"custom_checks", 1}};
  c.state_checks.present = true;
  c.state_checks.jsonpaths = {{.path = "$.db.orders[0].status", .op = manifest::StateAssertion::Op::kEquals,
                               .expected_json = R"("refunded")"}};
  c.transcript_rules.present = true;
  c.transcript_rules.must_contain = {"refunded"};
  c.llm_judge.present = true;
  c.llm_judge.rubric = "Confirms the refund.";
  c.custom_checks.present = true;
  return c;
}

Evidence passing_evidence() {
  Evidence ev;
  ev.messages = {{ChatMessage::Role::kUser, "Refund please"}, {ChatMessage::Role::kAssistant, "Refunded."}};
  ev.final_state_json = R"({"db": {"orders": [{"id": "O-1", "status": "refunded"}]}})";
  ev.judge = [](const std::string&, const std::string&, const std::string&) -> Result<JudgeReply> {
    return JudgeReply{R"({"score": 0.5, "reasons": "terse"})", 0.01};
  };
  ev.run_tests = []() -> Result<TestRun> { return TestRun{0, "ok"}; };
  return ev;
}

}  // namespace

TEST_CASE("grade: every configured component is scored and combined") {
  Evidence ev = passing_evidence();
  auto g = grade(full_config(), ev);
  REQUIRE(g);
  CHECK(g->components == std::map<std::string, double>{
                             {"custom_checks", 1}, {"llm_judge", 0.5}, {"state_checks", 1}, {"transcript_rules", 1}});
  CHECK(g->score == doctest::Approx(0.9));  // (2 + 1 + 0.5 + 1) / 5
  CHECK(g->binary_pass);
  CHECK(g->judge_cost_usd == doctest::Approx(0.01));
  CHECK(g->state_diff_json.empty());
  CHECK(g->reasons.front() == R"(state_checks: PASS $.db.orders[0].status equals "refunded": got "refunded")");
  CHECK(g->reasons.back() ==
        "combine: weighted (1×custom_checks 1 + 1×llm_judge 0.5 + 2×state_checks 1 + 1×transcript_rules 1) / 5 = 0.9 "
        "≥ threshold 0.8: pass");
}

TEST_CASE("grade: a failing component lowers the score; the others still count") {
  Evidence ev = passing_evidence();
  ev.judge = [](const std::string&, const std::string&, const std::string&) -> Result<JudgeReply> {
    return JudgeReply{R"({"score": 0, "reasons": "never confirmed"})", 0.01};
  };
  ev.run_tests = []() -> Result<TestRun> { return TestRun{-1, "", std::nullopt, true}; };
  auto g = grade(full_config(), ev);
  REQUIRE(g);
  CHECK(g->components.at("llm_judge") == 0);
  CHECK(g->components.at("custom_checks") == 0);
  CHECK(g->score == doctest::Approx(0.6));  // (2 + 1) / 5
  CHECK(!g->binary_pass);
  const auto has = [&](const std::string& r) {
    return std::find(g->reasons.begin(), g->reasons.end(), r) != g->reasons.end();
  };
  CHECK(has(R"(llm_judge: score 0: "never confirmed")"));
  CHECK(has(R"(custom_checks: FAIL: timed out after 300 s; output: "")"));
}

TEST_CASE("grade: only present sections are components; nothing configured passes; a NaN threshold is an error") {
  manifest::GradingConfig c;
  c.transcript_rules.present = true;
  c.transcript_rules.max_turns = 0;
  c.weights = {{"state_checks", 5}};
  Evidence ev = passing_evidence();
  auto g = grade(c, ev);
  REQUIRE(g);
  CHECK(g->components == std::map<std::string, double>{{"transcript_rules", 0}});
  CHECK(g->score == 0);
  CHECK(!g->binary_pass);

  auto empty = grade(manifest::GradingConfig{}, ev);
  REQUIRE(empty);
  CHECK(empty->components.empty());
  CHECK(empty->score == 1);
  CHECK(empty->binary_pass);

  c.pass_threshold = std::nan("");
  auto bad = grade(c, ev);
  REQUIRE(!bad);
  CHECK(bad.error().code == Errc::kInvalid);
  CHECK(bad.error().what() == "grading config error in grading.yaml: pass_threshold is not a finite number");
}
