// grading.yaml's `egress` rules over the trial's egress ledger: forbid_hosts, forbid_paths,
// forbid_any_outside_allowlist and max_requests, each a verdict that names the requests breaking it.
#pragma once

#include "core/result.h"
#include "grading/component.h"
#include "grading/evidence.h"
#include "manifest/grading_config.h"

namespace forge::grading {

// What grading needs of the rules without evidence: every host pattern in its normalised form,
// every path glob compiling, at least one phase, max_requests not negative (kInvalid naming it).
Status check_egress_config(const manifest::EgressRules& rules);

// Score 1 when every configured rule holds over the ledger's entries of the configured phases,
// else 0 (the grader turns a 0 into a failed trial: the rules are a gate). Reasons: one PASS or
// FAIL line per rule, a failing one followed by the distinct requests that broke it (at most 10,
// each counted). A ledger that dropped entries fails every rule the kept entries cannot clear:
// flooding the ledger must never hide a forbidden request. No ledger (Evidence::egress unset) is
// kUnsupported: the trial recorded none, and a rule without evidence must never pass.
Result<ComponentResult> evaluate_egress(const manifest::EgressRules& rules, const Evidence& evidence);

}  // namespace forge::grading
