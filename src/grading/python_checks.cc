// custom_checks from checks.py: the driver's result file as a component score and its reasons.
#include "grading/python_checks.h"

#include <cmath>

namespace forge::grading {

namespace {

constexpr std::size_t kMaxReportedChecks = 200;

std::string upper_status(const std::string& status) {
  if (status == "passed") return "PASS";
  if (status == "failed") return "FAIL";
  if (status == "skipped") return "SKIP";
  return "ERROR";
}

}  // namespace

Result<ComponentResult> score_checks_result(std::string_view result_json) {
  auto doc = json::parse(result_json, "the checks driver's result file");
  if (!doc) return doc.fail();
  if (!doc->IsObject() || !doc->HasMember("status") || !(*doc)["status"].IsString())
    return fail(Errc::kProtocol, "the checks driver's result file has no status");
  ComponentResult out;
  const std::string status = json::get_string(*doc, "status");
  if (status != "completed") {
    std::string error = json::get_string(*doc, "error");
    out.reasons.push_back("custom_checks: " + status + ": " + quote(error, 400));
  }
  if (const auto* checks = json::get_array(*doc, "checks")) {
    std::size_t n = 0;
    for (const auto& c : checks->GetArray()) {
      if (!c.IsObject()) continue;
      if (++n > kMaxReportedChecks) {
        out.reasons.push_back("custom_checks: " + std::to_string(checks->Size() - kMaxReportedChecks) +
                              " more checks not listed");
        break;
      }
      std::string line = "custom_checks: " + upper_status(json::get_string(c, "status")) + " " +
                         quote(json::get_string(c, "name"), 80);
      if (std::string msg = json::get_string(c, "message"); !msg.empty()) line += ": " + quote(msg, 300);
      out.reasons.push_back(std::move(line));
    }
  }
  const auto score = doc->FindMember("score");
  if (score == doc->MemberEnd() || score->value.IsNull()) {
    out.evaluated = false;
    out.reasons.push_back("custom_checks: not evaluated (" + quote(json::get_string(*doc, "reason"), 200) + ")");
    return out;
  }
  if (!score->value.IsNumber())
    return fail(Errc::kProtocol, "the checks driver's result file has a score that is not a number");
  // The driver passes on what checks.py computed: out of [0, 1] is the task's error.
  if (auto st = check_score(score->value.GetDouble(), "the score checks.py gave"); !st) return st.fail();
  out.score = score->value.GetDouble();
  std::string reason = json::get_string(*doc, "reason");
  out.reasons.push_back("custom_checks: score " + format_score(out.score) +
                        (reason.empty() ? "" : " (" + quote(reason, 200) + ")"));
  return out;
}

Result<ComponentResult> run_python_checks(const manifest::TestScripts& config, Evidence& evidence) {
  if (!evidence.run_checks)
    return fail(Errc::kUnsupported, "no checks container is available to run " + quote(config.checks_file));
  auto result = evidence.run_checks();
  if (!result) return result.fail_with("the checks could not run");
  return score_checks_result(*result);
}

}  // namespace forge::grading
