// Loading a task in Tolokaforge's native format (docs/task.md): task.yaml with its grading.yaml,
// environment, initial state, user simulator, system prompt and oracle solution.
#pragma once

#include <string>

#include "core/result.h"
#include "manifest/task_config.h"

namespace forge::manifest {

// `path` is a task directory or its task.yaml. Parsing is strict: an unknown key at any level
// is an error with a did-you-mean, and every problem in the task.yaml, its grading.yaml, its
// environment block and compose file is reported at once, as one kInvalid error with one
// "file:line:col: message" line each (task.yaml's first, by line). kNotFound when `path` does
// not exist.
Result<TaskConfig> load_task(const std::string& path);

}  // namespace forge::manifest
