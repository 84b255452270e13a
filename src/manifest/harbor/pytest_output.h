// pytest's output as Terminal-Bench 1's pytest parser reads it, without the holes it has: per-test
// results from the "short test summary info" block (pytest -rA), the session's closing counts
// line, and the reward they make.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace forge::manifest {

enum class PytestStatus { kPassed, kFailed, kSkipped, kXfail, kXpass, kError };
const char* to_string(PytestStatus s);  // pytest's word: "PASSED", "FAILED", …

struct PytestCase {
  std::string id;    // as pytest printed it: "tests/test_outputs.py::test_move[e2e4]"
  std::string name;  // what follows the first "::", which Terminal-Bench names tests by: "test_move[e2e4]"
  PytestStatus status = PytestStatus::kFailed;
  // Terminal-Bench's mapping: passed, skipped and xfail pass; failed, xpass and error fail.
  bool passed() const;
};

// The closing "=== 2 failed, 5 passed in 1.20s ===" line(s) of the output, summed over sessions.
struct PytestCounts {
  int passed = 0, failed = 0, errors = 0, skipped = 0, xfailed = 0, xpassed = 0;
};

struct PytestReport {
  bool has_summary = false;            // a "short test summary info" block was found
  std::vector<PytestCase> tests;       // its result lines, in order
  std::optional<PytestCounts> counts;  // from the counts line(s), when there are any
  bool resolved = false;
  double reward = 0;   // 1 when resolved, else 0: Terminal-Bench scores all or nothing
  std::string reason;  // why not resolved, for the trial's record; "" when resolved
};

// A task is resolved when every listed test passes and at least one is listed (Terminal-Bench
// takes an empty block as a pass), and the counts line, if any, reports no failure or error.
// Without a summary block the counts line alone decides (Terminal-Bench calls that a parse error).
// Neither: not resolved. At most 100000 tests are kept; ANSI colours and carriage returns are ignored.
PytestReport parse_pytest_output(std::string_view output);

}  // namespace forge::manifest
