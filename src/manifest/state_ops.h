// The operators of a state_checks assertion: their names (Tolokaforge's spellings included), and
// what operand each takes, checked when grading.yaml is read.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/json.h"
#include "manifest/grading_config.h"

namespace forge::manifest {

using StateOp = StateAssertion::Op;

// What an operator compares its matched value with.
enum class Operand {
  kNone,     // exists, not_exists: nothing (a boolean flips them)
  kAny,      // equals, not_equals, contains, not_contains: any JSON value
  kText,     // equals_ci, contains_ci: a string (or another scalar, compared as equals would)
  kNumber,   // gt, gte, lt, lte: a number, or a string that reads as one
  kList,     // in, not_in: a list of values
  kPattern,  // regex, not_regex: a Python `re` pattern that compiles
  kCount,    // len_gt, len_gte: a non-negative integer
  kDate,     // date_gt, date_gte, date_lt, date_lte: an ISO-8601 date or date-time
};

// The operator `name` stands for: a canonical name or an alias (ne, matches, in_ …).
std::optional<StateOp> state_op_named(std::string_view name);
// The canonical name, as reasons show it ("gte", "not_equals", "regex").
const char* state_op_name(StateOp op);
// Every name and alias, for an error's hint.
std::string state_op_names();
Operand operand_of(StateOp op);
// A negated operator holds for the path when it holds for every matched value (no order is
// cancelled); the others when it holds for one of them.
bool negated(StateOp op);

// What is wrong with `expected_json` as `op`'s operand, said after the key ("compares numbers; give
// a number (got a list)"), or nullopt when it fits. A pattern is compiled to know.
std::optional<std::string> operand_problem(StateOp op, std::string_view expected_json);

// What a JSON value is, as reasons say it: "a string", "a number", "a list", "a mapping", "null".
const char* json_kind(const json::Value& v);

// A string that is a whole decimal number ("12", " -3.5 ", "1e3"), as a number; else nullopt.
std::optional<double> number_in_text(std::string_view text);

// An instant in UTC, to the microsecond.
struct Instant {
  long long seconds = 0;  // since 1970-01-01T00:00:00Z
  long micros = 0;
  auto operator<=>(const Instant&) const = default;
};

// An ISO-8601 date ("2026-03-01", midnight UTC) or date-time ("2026-03-01T09:30:00",
// "…:00.5Z", "…:00+02:00"; no offset reads as UTC, as in Tolokaforge), else nullopt.
std::optional<Instant> instant_in_text(std::string_view text);

}  // namespace forge::manifest
