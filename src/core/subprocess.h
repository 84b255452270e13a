// Runs a host program with an argument vector (no shell), capturing its output.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"

namespace forge {

struct ProcessResult {
  int exit_code = -1;  // 128+signal when killed
  std::string out, err;
};

// Runs argv[0] (searched in PATH) to completion. An error only when it could not be started.
Result<ProcessResult> run_process(const std::vector<std::string>& argv);

}  // namespace forge
