// Loading a Terminal-Bench 1 task directory (docs/harbor.md "Terminal-Bench 1"): task.yaml with its
// inline instruction, docker-compose.yaml with the service `client`, run-tests.sh, tests/ and
// solution.sh, into the HarborTask shape that Harbor tasks have.
#pragma once

#include <string>

#include "core/result.h"
#include "manifest/harbor/harbor_task.h"

namespace forge::manifest {

// `path` is a task directory or its task.yaml. Strict as load_harbor_task: every key typed, a
// mistyped key an error with a did-you-mean, a key Terminal-Bench ignores (or that forgectl has no
// use for) a warning, one forgectl cannot honour (run_tests_in_same_shell, a parser other than
// pytest) an error saying why. The result has format kTerminalBench1, main_service "client" and
// reward_source kPytestOutput.
Result<HarborTask> load_tb1_task(const std::string& path);

}  // namespace forge::manifest
