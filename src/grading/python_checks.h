// custom_checks as Tolokaforge's checks.py: scoring the checks driver's result file.
#pragma once

#include <string_view>

#include "core/result.h"
#include "grading/component.h"
#include "grading/evidence.h"
#include "manifest/grading_config.h"

namespace forge::grading {

// Calls Evidence::run_checks() once and scores its result file (docs/python.md): the driver's
// `score` (the mean of the checks that were not skipped), each check a reason; a `null` score
// (every check skipped, or a failure with fail_on_error: false) leaves the component unevaluated.
// A result file that is not the driver's (unparsable, no status) is an error, as is a driver that
// could not run (the run_checks error).
Result<ComponentResult> run_python_checks(const manifest::TestScripts& config, Evidence& evidence);

// The same from the result file's text (exposed for unit tests).
Result<ComponentResult> score_checks_result(std::string_view result_json);

}  // namespace forge::grading
