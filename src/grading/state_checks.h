// state_checks: JSONPath assertions on the final state, file checks on the workspace, and the
// golden-replay hash, blended into one score.
#pragma once

#include <optional>
#include <string>

#include "core/json.h"
#include "core/result.h"
#include "grading/component.h"
#include "grading/evidence.h"
#include "manifest/grading_config.h"

namespace forge::grading {

struct CheckOutcome {
  bool passed = false;
  std::string reason;  // "state_checks: PASS …" / "state_checks: FAIL …"
};

// An assertion's configuration, checked without evaluating it: exactly one of path and path_glob,
// an operand that fits its operator (manifest::operand_problem), a JSONPath that parses.
// kInvalid, the context naming the assertion and where grading.yaml declares it.
Status check_assertion_config(const manifest::StateAssertion& a);

// A `path` assertion over the final state ({"db": …}). Passes when the path matches and some
// matched value satisfies the operator (state_operators.h), or every one for a negated operator
// (not_equals, not_contains, not_in, not_regex); not_exists when it matches nothing. Otherwise a
// path that matches nothing fails the check. Reasons end with ": got <the value seen>". A config
// problem (check_assertion_config) is an error.
Result<CheckOutcome> check_jsonpath(const manifest::StateAssertion& a, const json::Value& state);

// A `path_glob` assertion over Evidence::files(glob): passes when some matched file satisfies the
// operator on its content (every file for a negated one; see docs/grading.md "File checks"), or,
// with no operator, when any file matches (not_exists: none). Errors: a config problem
// (kInvalid), no files callback (kUnsupported), the workspace not readable (the files error, its
// code kept).
Result<CheckOutcome> check_file(const manifest::StateAssertion& a, Evidence& evidence);

// The state score from the assertion score A (passed / total, when there are assertions), the hash
// score H (0 or 1, when hash.enabled) and w = hash.weight clamped to [0, 1]:
//   both: A × (1 − w + w·H)    only A: A    only H: H    neither: 1 (nothing to check)
double blend_state_score(std::optional<double> assertions, std::optional<double> hash, double hash_weight);

struct StateChecksResult : ComponentResult {
  std::string state_diff_json;
};

// Every assertion, then the hash (replay.h), blended by blend_state_score. The first error of any
// check ends the component: a final state that is not JSON while a path assertion needs it
// (kProtocol), and the errors of check_jsonpath, check_file and check_state_hash.
Result<StateChecksResult> evaluate_state_checks(const manifest::StateChecks& config, Evidence& evidence);

}  // namespace forge::grading
