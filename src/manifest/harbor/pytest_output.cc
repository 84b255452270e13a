// Reading pytest's terminal output: the short test summary block, the counts line, the verdict.
#include "manifest/harbor/pytest_output.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace forge::manifest {

namespace {

constexpr std::size_t kMaxTests = 100000;
constexpr std::size_t kMaxLine = 64 * 1024;

std::string_view trim(std::string_view s, std::string_view chars = " \t") {
  std::size_t a = s.find_first_not_of(chars);
  if (a == std::string_view::npos) return {};
  return s.substr(a, s.find_last_not_of(chars) - a + 1);
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The output's lines without ANSI escape sequences (CSI … final byte) and carriage returns.
std::vector<std::string> clean_lines(std::string_view text) {
  std::vector<std::string> lines(1);
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      i += 2;
      while (i < text.size() && !(text[i] >= '@' && text[i] <= '~')) ++i;
    } else if (c == '\n') {
      lines.emplace_back();
    } else if (c != '\r' && lines.back().size() < kMaxLine) {
      lines.back() += c;
    }
  }
  return lines;
}

// "=+ short test summary info =+", as Terminal-Bench's pattern (case-insensitive).
bool is_summary_header(std::string_view line) {
  std::string l = lower(line);
  std::size_t at = l.find("short test summary info");
  if (at == std::string::npos) return false;
  std::string_view before = trim(std::string_view(l).substr(0, at), " \t");
  std::string_view after = trim(std::string_view(l).substr(at + 23), " \t");
  return !before.empty() && before.back() == '=' && !after.empty() && after.front() == '=';
}

std::optional<PytestStatus> status_word(std::string_view w) {
  if (w == "PASSED") return PytestStatus::kPassed;
  if (w == "FAILED") return PytestStatus::kFailed;
  if (w == "SKIPPED") return PytestStatus::kSkipped;
  if (w == "XFAIL") return PytestStatus::kXfail;
  if (w == "XPASS") return PytestStatus::kXpass;
  if (w == "ERROR") return PytestStatus::kError;
  return std::nullopt;
}

// "FAILED tests/test_x.py::test_a - AssertionError: …" → {id, name, status}; as Terminal-Bench:
// the " - reason" goes, the status word may end in ':', the name is what follows the first "::".
std::optional<PytestCase> result_line(std::string_view line) {
  line = trim(line);
  std::size_t space = line.find_first_of(" \t");
  if (space == std::string_view::npos) return std::nullopt;
  auto status = status_word(trim(line.substr(0, space), ":"));
  if (!status) return std::nullopt;
  std::string_view id = trim(line.substr(space));
  if (*status == PytestStatus::kFailed || *status == PytestStatus::kError) {
    std::size_t dash = id.rfind(" - ");
    if (dash != std::string_view::npos) id = trim(id.substr(0, dash));
  }
  std::size_t sep = id.find("::");
  std::string_view name = sep == std::string_view::npos ? id : id.substr(sep + 2);
  if (name.empty()) return std::nullopt;
  return PytestCase{std::string(id), std::string(name), *status};
}

// "2 failed, 5 passed, 1 warning in 1.20s" (between '=' rules or not) into `c`; false when the
// line is not a counts line.
bool counts_line(std::string_view line, PytestCounts& c) {
  line = trim(trim(line), "= \t");
  if (line.rfind("no tests ran", 0) == 0) return true;
  std::size_t in = line.rfind(" in ");
  if (in == std::string_view::npos || in == 0) return false;
  std::string_view took = line.substr(in + 4);
  if (took.empty() || !std::isdigit(static_cast<unsigned char>(took.front()))) return false;
  PytestCounts found;
  std::string_view items = line.substr(0, in);
  while (!items.empty()) {
    std::size_t comma = items.find(", ");
    std::string_view item = items.substr(0, comma);
    items = comma == std::string_view::npos ? std::string_view() : items.substr(comma + 2);
    std::size_t space = item.find(' ');
    if (space == std::string_view::npos) return false;
    int n = 0;
    auto [p, ec] = std::from_chars(item.data(), item.data() + space, n);
    if (ec != std::errc() || p != item.data() + space) return false;
    std::string_view word = item.substr(space + 1);
    int* slot = word == "passed"                        ? &found.passed
                : word == "failed"                      ? &found.failed
                : (word == "error" || word == "errors") ? &found.errors
                : word == "skipped"                     ? &found.skipped
                : word == "xfailed"                     ? &found.xfailed
                : word == "xpassed"                     ? &found.xpassed
                                                        : nullptr;
    bool ignored =
        word == "warning" || word == "warnings" || word == "deselected" || word == "rerun" || word == "subtests passed";
    if (!slot && !ignored) return false;
    if (slot) *slot += n;
  }
  c.passed += found.passed, c.failed += found.failed, c.errors += found.errors;
  c.skipped += found.skipped, c.xfailed += found.xfailed, c.xpassed += found.xpassed;
  return true;
}

std::string failed_names(const std::vector<PytestCase>& tests) {
  std::string out;
  std::size_t n = 0, shown = 0;
  for (const auto& t : tests) {
    if (t.passed()) continue;
    ++n;
    if (shown++ < 5) out += (out.empty() ? "" : ", ") + t.name;
  }
  if (shown > 5) out += ", …";
  return std::to_string(n) + " of " + std::to_string(tests.size()) + " tests failed: " + out;
}

}  // namespace

const char* to_string(PytestStatus s) {
  switch (s) {
    case PytestStatus::kPassed:
      return "PASSED";
    case PytestStatus::kFailed:
      return "FAILED";
    case PytestStatus::kSkipped:
      return "SKIPPED";
    case PytestStatus::kXfail:
      return "XFAIL";
    case PytestStatus::kXpass:
      return "XPASS";
    case PytestStatus::kError:
      return "ERROR";
  }
  return "FAILED";
}

bool PytestCase::passed() const {
  return status == PytestStatus::kPassed || status == PytestStatus::kSkipped || status == PytestStatus::kXfail;
}

PytestReport parse_pytest_output(std::string_view output) {
  PytestReport r;
  PytestCounts counts;
  bool has_counts = false;
  for (const auto& line : clean_lines(output)) {
    if (!r.has_summary && is_summary_header(line)) {
      r.has_summary = true;
      continue;
    }
    if (counts_line(line, counts)) {
      has_counts = true;
      continue;
    }
    // Terminal-Bench reads every line after the first header, so a second session's block counts too.
    if (r.has_summary && r.tests.size() < kMaxTests)
      if (auto t = result_line(line)) r.tests.push_back(std::move(*t));
  }
  if (has_counts) r.counts = counts;
  const int counted_failures = counts.failed + counts.errors + counts.xpassed;

  if (!r.tests.empty()) {
    bool all = std::all_of(r.tests.begin(), r.tests.end(), [](const PytestCase& t) { return t.passed(); });
    if (!all)
      r.reason = failed_names(r.tests);
    else if (counted_failures > 0)
      r.reason = "the summary lists only passing tests, but pytest reports " + std::to_string(counted_failures) +
                 " failed or in error";
    r.resolved = r.reason.empty();
  } else if (has_counts) {
    if (counted_failures > 0)
      r.reason = "pytest reports " + std::to_string(counts.failed) + " failed, " + std::to_string(counts.errors) +
                 " errors, " + std::to_string(counts.xpassed) + " xpassed";
    else if (counts.passed + counts.skipped + counts.xfailed == 0)
      r.reason = "pytest ran no test";
    r.resolved = r.reason.empty();
  } else {
    r.reason = r.has_summary ? "the short test summary lists no test result"
                             : "no pytest summary in the output (pytest did not finish, or ran without -rA)";
  }
  r.reward = r.resolved ? 1.0 : 0.0;
  return r;
}

}  // namespace forge::manifest
