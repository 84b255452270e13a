// What one grading component reports, and the small helpers every component writes reasons with.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"

namespace forge::grading {

// The component keys of Grade::components and GradingConfig::weights.
inline constexpr const char* kStateChecks = "state_checks";
inline constexpr const char* kTranscriptRules = "transcript_rules";
inline constexpr const char* kLlmJudge = "llm_judge";
inline constexpr const char* kCustomChecks = "custom_checks";
inline constexpr const char* kEgress = "egress";  // a gate, never weighed (grader.cc)

struct ComponentResult {
  double score = 0;                  // in [0, 1]
  std::vector<std::string> reasons;  // each starts with the component key: "state_checks: …"
  bool evaluated = true;             // false: no score (Tolokaforge's None), only the reasons
};

// `v` limited to [0, 1]; NaN becomes 0 so that a broken score can never pass.
double clamp01(double v);
// Every score or reward a grader produces must be a finite number in [0, 1]. Otherwise
// kInvalid naming it ("WHAT is 1e+308, not a number in [0, 1]"): the task's error (a setup
// error), never a pass and never counted, since no model's answer makes a grader leave [0, 1].
Status check_score(double v, std::string_view what);

// A score as reasons print it: at most 6 significant digits ("1", "0.5", "0.333333").
std::string format_score(double v);

// `s` cut to `max_bytes` at a UTF-8 boundary, with a marker saying how much was dropped.
std::string truncate_utf8(std::string_view s, std::size_t max_bytes);

// `s` for a one-line reason: quoted, control characters escaped, long text cut ("…").
std::string quote(std::string_view s, std::size_t max_bytes = 120);

// A JSON value for a one-line reason, cut like quote().
std::string json_excerpt(const json::Value& v, std::size_t max_bytes = 120);

// ASCII case-insensitive substring test (grading's "_ci" operators; non-ASCII bytes compare as is).
bool contains_ci(std::string_view haystack, std::string_view needle);
bool equals_ci(std::string_view a, std::string_view b);

}  // namespace forge::grading
