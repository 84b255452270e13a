// custom_checks from checks.py: the driver's result file as a score, reasons and "not evaluated".
#include <doctest/doctest.h>

#include "grading/grader.h"
#include "grading/python_checks.h"
#include "core/json.h"
#include "trial/checks_run.h"

using namespace forge;
using namespace forge::grading;

namespace {

bool has(const std::vector<std::string>& reasons, const std::string& text) {
  for (const auto& r : reasons)
    if (r.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("python checks: the driver's score and each check become the component and its reasons") {
  auto r = score_checks_result(
      R"({"version": 1, "status": "completed", "checks": [
           {"name": "paid", "status": "passed", "score": 1.0, "message": "O-1 is paid"},
           {"name": "told", "status": "failed", "score": 0.0, "message": "no total"}],
         "score": 0.5, "reason": "Custom checks: score=0.50, 1/2 checks passed"})");
  REQUIRE(r.has_value());
  CHECK(r->evaluated);
  CHECK(r->score == doctest::Approx(0.5));
  CHECK(has(r->reasons, "custom_checks: PASS \"paid\": \"O-1 is paid\""));
  CHECK(has(r->reasons, "custom_checks: FAIL \"told\": \"no total\""));
  CHECK(has(r->reasons, "custom_checks: score 0.5"));

  // Every check skipped (or an error with fail_on_error: false): no score at all.
  r = score_checks_result(R"({"status": "completed", "checks": [{"name": "x", "status": "skipped"}], "score": null})");
  REQUIRE(r.has_value());
  CHECK_FALSE(r->evaluated);
  CHECK(has(r->reasons, "custom_checks: not evaluated"));

  r = score_checks_result(R"({"status": "error", "error": "ModuleNotFoundError: No module named 'x'", "checks": [], "score": 0.0})");
  REQUIRE(r.has_value());
  CHECK(r->score == 0);
  CHECK(has(r->reasons, "custom_checks: error: \"ModuleNotFoundError"));

  CHECK_FALSE(score_checks_result("not json").has_value());
  CHECK_FALSE(score_checks_result(R"({"checks": []})").has_value());
  CHECK_FALSE(score_checks_result(R"({"status": "completed", "score": "high"})").has_value());
}

TEST_CASE("python checks: without a checks container grading is an error, and an unevaluated component is left out") {
  manifest::GradingConfig g;
  g.custom_checks.present = true;
  g.custom_checks.checks_file = "checks.py";
  g.weights = {{"custom_checks", 1.0}};
  Evidence ev;
  CHECK_FALSE(grade(g, ev).has_value());
  ev.run_checks = [] { return Result<std::string>(std::string(R"({"status": "completed", "checks": [], "score": null})")); };
  auto out = grade(g, ev);
  REQUIRE(out.has_value());
  CHECK(out->components.count("custom_checks") == 0);
}

TEST_CASE("python checks: the transcript handed to checks.py carries each call's real status and result") {
  ChatMessage asked{ChatMessage::Role::kAssistant, ""};
  asked.tool_calls = {{"c1", "read_file", R"({"path":"/etc/shadow"})"},
                      {"c2", "write_file", R"({"path":"refund.txt","content":"42"})"},
                      {"c3", "write_file", R"({"path":"late.txt"})"}};
  ChatMessage refused{ChatMessage::Role::kTool, "Error: path '/etc/shadow' is outside the workspace"};
  refused.tool_call_id = "c1";
  refused.name = "read_file";
  refused.tool_error = true;
  ChatMessage wrote{ChatMessage::Role::kTool, "wrote 2 bytes to refund.txt"};  // the honest control
  wrote.tool_call_id = "c2";
  wrote.name = "write_file";
  // c3 was never answered (the episode ended first): it never ran.
  const std::string text = trial::checks_transcript_json({asked, refused, wrote});

  json::Document d;
  REQUIRE(!json::parse_document(d, text));
  const auto& msgs = d["messages"];
  REQUIRE(msgs.Size() == 3);
  const auto& calls = msgs[0]["tool_calls"];
  REQUIRE(calls.Size() == 3);
  CHECK(json::get_string(calls[0], "status") == "error");
  CHECK(json::get_string(calls[0], "result") == "Error: path '/etc/shadow' is outside the workspace");
  CHECK(json::get_string(calls[1], "status") == "success");
  CHECK(json::get_string(calls[1], "result") == "wrote 2 bytes to refund.txt");
  CHECK(json::get_string(calls[2], "status") == "error");
  CHECK_FALSE(calls[2].HasMember("result"));
  CHECK(json::get_string(msgs[1], "status") == "error");
  CHECK(json::get_string(msgs[2], "status") == "success");
  CHECK(json::get_string(calls[0]["function"], "name") == "read_file");
}
