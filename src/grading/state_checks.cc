// state_checks: assertions over the final state and the workspace, plus golden replay.
#include "grading/state_checks.h"

#include <cmath>
#include <string_view>
#include <vector>

#include "core/jsonpath.h"
#include "core/limits.h"
#include "core/strings.h"
#include "grading/replay.h"
#include "grading/state_operators.h"
#include "manifest/state_ops.h"
#include "tools/schema.h"

namespace forge::grading {

namespace {

using Op = manifest::StateAssertion::Op;

// The state and files hold what the agent wrote: json::parse_document parses without recursion
// and refuses nesting beyond limits::kMaxJsonDepth, which bounds RapidJSON's recursive ==.

// "$.db.orders[0].status equals \"shipped\" (order shipped)": the check as reasons name it.
std::string describe(const manifest::StateAssertion& a, std::string_view target) {
  std::string out = std::string(target) + " " + manifest::state_op_name(a.op);
  if (!a.expected_json.empty()) out += " " + truncate_utf8(a.expected_json, 120);
  if (!a.description.empty()) out += " (" + truncate_utf8(a.description, 160) + ")";
  return out;
}

CheckOutcome pass(const manifest::StateAssertion& a, std::string_view target, const std::string& detail = "") {
  return {true, "state_checks: PASS " + describe(a, target) + (detail.empty() ? "" : ": " + detail)};
}

CheckOutcome failed(const manifest::StateAssertion& a, std::string_view target, const std::string& why) {
  return {false, "state_checks: FAIL " + describe(a, target) + ": " + why};
}

std::string_view target_of(const manifest::StateAssertion& a) {
  if (!a.path.empty()) return a.path;
  if (!a.path_glob.empty()) return a.path_glob;
  return "(no path)";
}

// The assertion and its line in grading.yaml, for configuration errors.
std::string locate(const manifest::StateAssertion& a) {
  std::string out = describe(a, target_of(a));
  if (a.where.line > 0) out += " (line " + std::to_string(a.where.line) + ")";
  return out;
}

// A configuration problem of one assertion: kInvalid, naming it and where it is declared.
Error config_error(const manifest::StateAssertion& a, const std::string& why) {
  return make_error(Errc::kInvalid, why).with_context(locate(a));
}

// An error about one check: "<the check>: <what>: <the underlying error>".
Unexpected check_error(const manifest::StateAssertion& a, const Error& e, std::string_view what) {
  return fail(e.with_context(what).with_context(describe(a, target_of(a))));
}

// "got 3", "got 3 and 2 more": the value a reason shows beside the operand.
std::string got(const json::Value& v, std::size_t more = 0) {
  return "got " + json_excerpt(v) + (more > 0 ? " and " + std::to_string(more) + " more" : "");
}

// A file's content as a reason quotes it: a JSON string, cut short.
std::string json_string_excerpt(const std::string& content) {
  json::Document d;
  const std::string head = truncate_utf8(content, 200);
  d.SetString(head.data(), static_cast<rapidjson::SizeType>(head.size()), d.GetAllocator());
  return json_excerpt(d);
}

}  // namespace

Status check_assertion_config(const manifest::StateAssertion& a) {
  auto invalid = [&](const std::string& why) { return fail(config_error(a, why)); };
  if (a.path.empty() && a.path_glob.empty()) return invalid("the assertion has neither path nor path_glob");
  if (!a.path.empty() && !a.path_glob.empty()) return invalid("the assertion has both path and path_glob");
  if (auto op = StateOperator::make(a); !op) return invalid(op.error().message);
  if (!a.path.empty())
    if (auto v = jsonpath_validate(a.path); !v) return invalid(v.error().message);
  return {};
}

Result<CheckOutcome> check_jsonpath(const manifest::StateAssertion& a, const json::Value& state) {
  if (auto st = check_assertion_config(a); !st) return st.fail_with("grading config error");
  if (a.path.empty()) return fail(config_error(a, "not a path assertion"));
  auto op = StateOperator::make(a);
  if (!op) return fail(config_error(a, op.error().message).with_context("grading config error"));
  auto matches = jsonpath_query(state, a.path);
  if (!matches) return fail(config_error(a, matches.error().message).with_context("grading config error"));
  if (matches->empty()) {
    if (a.op == Op::kNotExists) return pass(a, a.path, "path not found");
    return failed(a, a.path, "path not found");
  }
  // A negated operator must hold for every matched value; the first it does not hold for fails it.
  if (manifest::negated(a.op)) {
    for (const json::Value* v : *matches) {
      Verdict r = op->on_value(*v);
      if (!r.holds) return failed(a, a.path, (r.why.empty() ? "" : r.why + ": ") + got(*v));
    }
    return pass(a, a.path, got(*matches->front(), matches->size() - 1));
  }
  for (const json::Value* v : *matches)
    if (op->on_value(*v).holds) return pass(a, a.path, got(*v));
  Verdict first = op->on_value(*matches->front());
  return failed(a, a.path, (first.why.empty() ? "" : first.why + ": ") + got(*matches->front(), matches->size() - 1));
}

Result<CheckOutcome> check_file(const manifest::StateAssertion& a, Evidence& evidence) {
  if (auto st = check_assertion_config(a); !st) return st.fail_with("grading config error");
  const std::string& glob = a.path_glob;
  if (glob.empty()) return fail(config_error(a, "not a path_glob assertion"));
  auto op = StateOperator::make(a);
  if (!op) return fail(config_error(a, op.error().message).with_context("grading config error"));
  if (!evidence.files)
    return check_error(a, make_error(Errc::kUnsupported, "this trial has no workspace to read files from"),
                       "reading the workspace files");
  auto files = evidence.files(glob);
  if (!files) return check_error(a, files.error(), "reading the workspace files");
  // A file whose content was not read (too large) exists but satisfies no content operator;
  // the first such reason, or a note on the listing, says why the check failed.
  std::size_t real = 0;
  std::string unread;
  for (const auto& f : *files) {
    if (!f.path.empty()) ++real;
    if (unread.empty() && !f.unread.empty()) unread = f.path.empty() ? f.unread : f.path + " is " + f.unread;
  }
  const std::string why_unread = unread.empty() ? "" : "; " + unread;
  if (a.op == Op::kNotExists) {
    if (real == 0) return pass(a, glob, "no file matches" + why_unread);
    return failed(a, glob, std::to_string(real) + " file(s) match");
  }
  if (real == 0) return failed(a, glob, "no file matches" + why_unread);
  if (a.op == Op::kExists) return pass(a, glob, std::to_string(real) + " file(s) match");
  if (manifest::negated(a.op)) {
    // Every file must hold; a file not read cannot be shown to.
    for (const auto& f : *files) {
      if (f.path.empty()) continue;
      if (!f.unread.empty()) return failed(a, glob, f.path + " is " + f.unread);
      Verdict r = op->on_file(f.content);
      if (!r.holds) return failed(a, glob, f.path + (r.why.empty() ? "" : ": " + r.why) + ": got " +
                                               json_string_excerpt(f.content));
    }
    return pass(a, glob, std::to_string(real) + " file(s) checked");
  }
  const WorkspaceFile* first = nullptr;
  for (const auto& f : *files) {
    if (f.path.empty() || !f.unread.empty()) continue;
    if (op->on_file(f.content).holds) return pass(a, glob, "matched " + f.path);
    if (!first) first = &f;
  }
  // The first file read, as the value seen: "…; /work/count.txt: got \"42\\n\"".
  std::string seen;
  if (first) {
    Verdict v = op->on_file(first->content);
    seen = "; " + first->path + (v.why.empty() ? "" : ": " + v.why) + ": got " + json_string_excerpt(first->content);
  }
  return failed(a, glob, "no matching file satisfies it (" + std::to_string(real) + " checked)" + why_unread + seen);
}

double blend_state_score(std::optional<double> assertions, std::optional<double> hash, double hash_weight) {
  if (assertions && hash) {
    const double w = clamp01(hash_weight);
    // The product (Tolokaforge's production path) when w = 1; the hash only scales the assertion
    // score by (1 - w) on a mismatch, so neither source is silently ignored at the default weight.
    return *assertions * (1 - w + w * *hash);
  }
  if (assertions) return *assertions;
  if (hash) return *hash;
  return 1;
}

Result<StateChecksResult> evaluate_state_checks(const manifest::StateChecks& config, Evidence& evidence) {
  StateChecksResult out;
  json::Document state;
  const std::string_view text =
      evidence.final_state_json.empty() ? std::string_view("{}") : std::string_view(evidence.final_state_json);
  auto bad = json::parse_document(state, text);
  // The agent can nest its records deeply: the parse's depth limit is part of the grader's contract.
  const bool state_too_deep = bad && bad->why == json::ParseFailure::Why::kTooDeep;
  const bool state_parsed = !bad;

  std::size_t passed = 0;
  for (const auto& a : config.jsonpaths) {
    // Config problems first: they are the same in every trial, whatever the evidence.
    if (auto st = check_assertion_config(a); !st) return st.fail_with("grading config error");
    Result<CheckOutcome> c = CheckOutcome{};
    if (!a.path_glob.empty()) {
      c = check_file(a, evidence);
    } else if (state_too_deep) {
      c = failed(a, a.path, "the final state nests deeper than " + std::to_string(limits::kMaxJsonDepth) + " levels");
    } else if (!state_parsed) {
      // The caller read the state from the json-db: a store answering garbage is no verdict.
      return check_error(a,
                         make_error(Errc::kProtocol, "offset " + std::to_string(bad->offset) + " of " +
                                                         std::to_string(text.size()) + " bytes"),
                         "the final state is not valid JSON");
    } else {
      c = check_jsonpath(a, state);
    }
    if (!c) return c.fail();
    passed += c->passed ? 1 : 0;
    out.reasons.push_back(std::move(c->reason));
  }

  std::optional<double> assertion_score, hash_score;
  if (!config.jsonpaths.empty()) assertion_score = double(passed) / double(config.jsonpaths.size());
  if (config.hash.enabled) {
    auto h = check_state_hash(config.hash, evidence.state);
    if (!h) return h.fail();
    hash_score = h->score;
    for (auto& r : h->reasons) out.reasons.push_back(std::move(r));
    out.state_diff_json = std::move(h->state_diff_json);
  }

  const double w = config.hash.weight;
  if (assertion_score && hash_score && !(w >= 0 && w <= 1))
    out.reasons.push_back("state_checks: note: hash.weight " + format_score(w) + " is outside [0, 1], clamped to " +
                          format_score(clamp01(w)));
  out.score = blend_state_score(assertion_score, hash_score, w);
  std::string summary = "state_checks: score " + format_score(out.score) + " (";
  if (assertion_score) summary += "assertions " + std::to_string(passed) + "/" + std::to_string(config.jsonpaths.size());
  if (assertion_score && hash_score) summary += ", ";
  if (hash_score) summary += "hash " + format_score(*hash_score);
  if (assertion_score && hash_score) summary += ", hash weight " + format_score(clamp01(w));
  if (!assertion_score && !hash_score) summary += "nothing to check: no assertions and hash disabled";
  out.reasons.push_back(summary + ")");
  return out;
}

}  // namespace forge::grading
