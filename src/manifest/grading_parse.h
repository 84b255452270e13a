// Strict parsing of grading.yaml (Tolokaforge's native format; docs/task.md "grading.yaml").
#pragma once

#include <regex>
#include <string>
#include <string_view>

#include "core/result.h"
#include "manifest/diagnostics.h"
#include "manifest/grading_config.h"

namespace forge::manifest {

// Loads a grading.yaml (or a directory holding one). Every problem is reported, as one kInvalid
// error with one "file:line:col: message" line each; kNotFound when the file does not exist.
// Relative paths in it (custom_checks.dir) resolve against its directory, the task's.
Result<GradingConfig> load_grading(const std::string& path);
// The same, adding problems to `diags` (load_task reports a task's and its grading's together);
// the value is meaningful only when nothing was added. `task_dir` anchors relative paths when
// the grading file is not in the task directory itself (`grading: checks/grading.yaml`).
GradingConfig load_grading(const std::string& path, Diagnostics& diags, const std::string& task_dir = {});

// Compiles a transcript_rules.disallow_regex pattern. Patterns are written for Python's `re`;
// forgectl runs them as ECMAScript (std::regex), taking leading inline flags (?i) (?m) (?s)
// (and the no-op a/u), Python's named groups (?P<name>…) and \A / \Z. Anything ECMAScript cannot
// express (lookbehind, (?P=name), (?x), scoped flags) is kInvalid, naming the construct. The
// grader must compile with this too, so a pattern that validates is the pattern that runs.
Result<std::regex> compile_transcript_regex(std::string_view pattern);

}  // namespace forge::manifest
