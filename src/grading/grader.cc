// The grading entry point: check the config, run the configured components, combine.
#include "grading/grader.h"

#include <cmath>
#include <exception>
#include <functional>
#include <map>

#include "grading/combine.h"
#include "grading/component.h"
#include "grading/egress_rules.h"
#include "grading/judge.h"
#include "grading/python_checks.h"
#include "grading/state_checks.h"
#include "grading/test_scripts.h"
#include "grading/transcript.h"

namespace forge::grading {

namespace {

// Runs one component and records its score and reasons. Its error, or an exception (a bug, an
// allocation failure, a throwing callback), is returned with the component named: a grade with a
// component missing or zeroed by a fault of grading would misstate the model's result.
Status run_component(const char* name, Grade& g, const std::function<Result<ComponentResult>()>& body) {
  Result<ComponentResult> r = ComponentResult{};
  try {
    r = body();
  } catch (const std::exception& e) {
    return fail(make_error(Errc::kIo, std::string("grading failed: ") + e.what()).with_context(name));
  } catch (...) {
    return fail(make_error(Errc::kIo, "grading failed with an unknown exception").with_context(name));
  }
  if (!r) return r.fail_with(name);
  if (r->evaluated) {
    if (auto st = check_score(r->score, "its score"); !st) return st.fail_with(name);
    g.components[name] = r->score;
  }
  for (auto& reason : r->reasons) g.reasons.push_back(std::move(reason));
  return {};
}

}  // namespace

Status check_config(const manifest::GradingConfig& config) {
  const std::string where = "grading config error in " + (config.path.empty() ? "grading.yaml" : config.path);
  if (!std::isfinite(config.pass_threshold))
    return fail(make_error(Errc::kInvalid, "pass_threshold is not a finite number").with_context(where));
  auto in = [&](const char* component, const Status& st) {
    return fail(st.error().with_context(where).with_context(component));
  };
  if (config.state_checks.present)
    for (const auto& a : config.state_checks.jsonpaths)
      if (auto st = check_assertion_config(a); !st) return in(kStateChecks, st);
  if (config.transcript_rules.present)
    if (auto st = check_transcript_config(config.transcript_rules); !st) return in(kTranscriptRules, st);
  if (config.llm_judge.present)
    if (auto st = check_judge_config(config.llm_judge); !st) return in(kLlmJudge, st);
  if (config.egress.present)
    if (auto st = check_egress_config(config.egress); !st) return in(kEgress, st);
  return {};
}

Result<Grade> grade(const manifest::GradingConfig& config, Evidence& evidence) {
  if (auto st = check_config(config); !st) return st.fail();
  Grade g;
  struct Step {
    bool present;
    const char* name;
    std::function<Result<ComponentResult>()> body;
  };
  const Step steps[] = {
      // First: it costs nothing, and a trial without a ledger stops before any paid judge call.
      {config.egress.present, kEgress, [&] { return evaluate_egress(config.egress, evidence); }},
      {config.state_checks.present, kStateChecks,
       [&]() -> Result<ComponentResult> {
         auto r = evaluate_state_checks(config.state_checks, evidence);
         if (!r) return r.fail();
         g.state_diff_json = std::move(r->state_diff_json);
         return ComponentResult{r->score, std::move(r->reasons)};
       }},
      {config.transcript_rules.present, kTranscriptRules,
       [&] { return evaluate_transcript_rules(config.transcript_rules, evidence); }},
      {config.llm_judge.present, kLlmJudge,
       [&]() -> Result<ComponentResult> {
         auto r = run_judge(config.llm_judge, evidence);
         if (!r) return r.fail();
         g.judge_cost_usd += r->cost_usd;
         return ComponentResult{r->score, std::move(r->reasons)};
       }},
      {config.custom_checks.present, kCustomChecks,
       [&] {
         return config.custom_checks.python() ? run_python_checks(config.custom_checks, evidence)
                                              : run_test_scripts(config.custom_checks, evidence);
       }},
  };
  // The first error ends grading: a partially graded trial must not be recorded, and the
  // components after it (a paid judge call, a grader container) would be spent for nothing.
  for (const Step& s : steps)
    if (s.present)
      if (auto st = run_component(s.name, g, s.body); !st) return st.fail();

  // The egress rules are a gate, not a weighed score: combined without them, then a failed rule
  // zeroes the trial whatever the others scored.
  std::map<std::string, double> weighed = g.components;
  weighed.erase(kEgress);
  Combined c = combine(config.method, config.weights, config.pass_threshold, weighed);
  g.score = c.score;
  g.binary_pass = c.pass;
  for (auto& reason : c.reasons) g.reasons.push_back(std::move(reason));
  if (auto e = g.components.find(kEgress); e != g.components.end() && e->second < 1) {
    g.score = 0;
    g.binary_pass = false;
    g.reasons.push_back("combine: egress failed, a gate: score 0, fail");
  }
  return g;
}

void regate_egress(const manifest::GradingConfig& config, const EgressLedger& whole, Grade& g) {
  auto held = g.components.find(kEgress);
  if (!config.egress.present || held == g.components.end() || held->second < 1) return;
  Evidence late;
  late.egress = whole;
  auto r = evaluate_egress(config.egress, late);
  if (!r || r->score >= 1) return;
  held->second = 0;
  g.score = 0;
  g.binary_pass = false;
  for (auto& reason : r->reasons) g.reasons.push_back(std::move(reason) + " (in the ledger read at teardown)");
  g.reasons.push_back("combine: egress failed, a gate: score 0, fail");
}

}  // namespace forge::grading
