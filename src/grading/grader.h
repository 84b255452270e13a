// Grades one trial: every configured component of grading.yaml, then the combine rule.
#pragma once

#include "core/result.h"
#include "grading/evidence.h"
#include "manifest/grading_config.h"

namespace forge::grading {

// The configuration checks grade() would otherwise hit in the middle of a trial: pass_threshold
// finite, every state assertion well formed (exactly one of path and path_glob, a JSON operand,
// a JSONPath that parses), a non-empty rubric and an output_schema that compiles, every
// disallow_regex compiling, usable required-action arguments. kInvalid, naming the file, the
// component and the check. Cheap and evidence-free: preflight calls it once per task, so that a
// configuration fault is a setup error before the first trial.
Status check_config(const manifest::GradingConfig& config);

// Runs check_config, then egress, state_checks, transcript_rules, llm_judge and custom_checks,
// each when its section is present, and combines them (combine.h); egress is not weighed but
// gates: a failed egress rule makes the grade 0, fail (egress_rules.h). Only the model's work scores: a
// component that cannot reach a verdict (its evidence unreadable, the judge malfunctioning, the
// state store failing, a config fault, an exception) is an error, returned at once with the
// component in the context ("llm_judge: the judge call failed: …") and its cause's code kept;
// nothing further runs, and no partial Grade exists. An exception is kIo ("grading failed: …").
Result<Grade> grade(const manifest::GradingConfig& config, Evidence& evidence);
// The egress gate again, over the ledger read whole at teardown: a request the proxy logged a
// moment after grading read the ledger (Docker's log delivery lags) must not pass. A gate that
// now fails zeroes `g` and says why; one that held stays as it was.
void regate_egress(const manifest::GradingConfig& config, const EgressLedger& whole, Grade& g);

}  // namespace forge::grading
