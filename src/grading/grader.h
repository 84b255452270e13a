// Grades one trial: every configured component of grading.yaml, then the combine rule.
#pragma once

#include "core/result.h"
#include "grading/evidence.h"
#include "manifest/grading_config.h"

namespace forge::grading {

// Runs state_checks, transcript_rules, llm_judge and custom_checks, each when its section is
// present, and combines them (combine.h). A component that fails or throws scores 0 with its
// reason; grading itself fails only when pass_threshold is not a finite number (kInvalid).
Result<Grade> grade(const manifest::GradingConfig& config, Evidence& evidence);

}  // namespace forge::grading
