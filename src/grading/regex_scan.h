// std::regex_search over untrusted text without letting the text crash or stall the grader.
//
// libstdc++ matches ECMAScript regexes with a recursive backtracker: its stack depth grows with
// the input (`a.*b` over ~25 KB overflows an 8 MiB stack and kills the process) and a search
// costs up to quadratic time (`a.*secret` over 8 KB of "aaa…" takes seconds). An agent controls
// its messages, so grading scans them in overlapping windows, on a thread with a stack sized for
// a window, under a time budget.
#pragma once

#include <chrono>
#include <cstddef>
#include <regex>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace forge::grading {

// Windows of this many bytes, each starting kRegexWindowOverlap bytes before the previous one
// ended: a match of up to kRegexWindowOverlap bytes is always found; a longer one is found when it
// fits inside one window. Anchors and \b see the real neighbouring characters at window edges.
inline constexpr std::size_t kRegexWindow = 8 * 1024;
inline constexpr std::size_t kRegexWindowOverlap = 2 * 1024;
inline constexpr std::chrono::milliseconds kRegexBudget{10000};

// For each text, whether `re` matches somewhere in it. kTimeout when the scan outlasts `budget`
// (the scan thread stops at its next window), kInvalid when the regex engine gives up
// (std::regex_error: complexity or stack limits), kUnavailable when the scan thread cannot start.
Result<std::vector<bool>> regex_search_each(const std::regex& re, const std::vector<std::string_view>& texts,
                                            std::chrono::milliseconds budget = kRegexBudget);

}  // namespace forge::grading
