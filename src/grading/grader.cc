// The grading entry point: run the configured components, isolate their failures, combine.
#include "grading/grader.h"

#include <cmath>
#include <exception>
#include <functional>
#include <map>

#include "grading/combine.h"
#include "grading/component.h"
#include "grading/judge.h"
#include "grading/state_checks.h"
#include "grading/test_scripts.h"
#include "grading/transcript.h"

namespace forge::grading {

namespace {

// Runs one component; an exception (a bug, an allocation failure, a throwing callback) becomes a
// score of 0 with the reason instead of ending the grading of the trial, or the process.
void run_component(const char* name, Grade& g, const std::function<ComponentResult()>& body) {
  ComponentResult r;
  try {
    r = body();
  } catch (const std::exception& e) {
    r = {0, {std::string(name) + ": ERROR: grading failed: " + e.what()}};
  } catch (...) {
    r = {0, {std::string(name) + ": ERROR: grading failed with an unknown exception"}};
  }
  g.components[name] = clamp01(r.score);
  for (auto& reason : r.reasons) g.reasons.push_back(std::move(reason));
}

}  // namespace

Result<Grade> grade(const manifest::GradingConfig& config, Evidence& evidence) {
  if (!std::isfinite(config.pass_threshold))
    return fail(Errc::kInvalid, "grading config " + config.path + ": pass_threshold is not a finite number");
  Grade g;
  if (config.state_checks.present)
    run_component(kStateChecks, g, [&] {
      StateChecksResult r = evaluate_state_checks(config.state_checks, evidence);
      g.state_diff_json = std::move(r.state_diff_json);
      return ComponentResult{r.score, std::move(r.reasons)};
    });
  if (config.transcript_rules.present)
    run_component(kTranscriptRules, g, [&] { return evaluate_transcript_rules(config.transcript_rules, evidence); });
  if (config.llm_judge.present)
    run_component(kLlmJudge, g, [&] {
      JudgeResult r = run_judge(config.llm_judge, evidence);
      g.judge_cost_usd += r.cost_usd;
      return ComponentResult{r.score, std::move(r.reasons)};
    });
  if (config.custom_checks.present)
    run_component(kCustomChecks, g, [&] { return run_test_scripts(config.custom_checks, evidence); });

  Combined c = combine(config.method, config.weights, config.pass_threshold, g.components);
  g.score = c.score;
  g.binary_pass = c.pass;
  for (auto& reason : c.reasons) g.reasons.push_back(std::move(reason));
  return g;
}

}  // namespace forge::grading
