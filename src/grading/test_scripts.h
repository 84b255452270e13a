// custom_checks: the task's test scripts, run by the caller in a fresh grader container.
#pragma once

#include "grading/component.h"
#include "grading/evidence.h"
#include "manifest/grading_config.h"

namespace forge::grading {

// Calls Evidence::run_tests() once. The score is the reward clamped to [0, 1] when the reward
// file gave a value, else 1 for exit code 0 and 0 for anything else. A timeout, a run that could
// not start, or no grader at all scores 0 with the reason.
ComponentResult run_test_scripts(const manifest::TestScripts& config, Evidence& evidence);

}  // namespace forge::grading
