// A task's use of mock-web (initial_state.mock_web.base_url): on the built-in core stack it gets
// the mock-web service, the definition of the built-in `full` stack, before its trials are keyed
// and planned; a stack that can have none is a setup error (docs/task.md, "initial_state").
#pragma once

#include <vector>

#include "core/result.h"
#include "manifest/task_config.h"
#include "trial/preflight.h"

namespace forge::trial {

// A task with initial_state.mock_web.base_url on the built-in core stack (no compose file) that
// has no mock-web service gets full.yaml's; true when it did. Tasks on the local executor are
// left alone (preflight refuses them).
Result<bool> add_mock_web(manifest::TaskConfig& task);

// The problems of a task's base_url: a compose file with no service named mock-web, `stack:
// none`, or a category or task_id that cannot name the task's directory under /task/.
std::vector<Problem> check_mock_web(const manifest::TaskConfig& task);

}  // namespace forge::trial
