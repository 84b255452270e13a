// The state_checks operators' names and operands (state_ops.h).
#include "manifest/state_ops.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "core/json.h"
#include "core/strings.h"
#include "manifest/python_regex.h"

namespace forge::manifest {

namespace {

struct Spelling {
  std::string_view name;
  StateOp op;
};

// Canonical names first (state_op_name returns the first spelling of each operator); then the
// aliases Tolokaforge's packs write: its trace checks' `in_`, and the usual short forms.
constexpr Spelling kSpellings[] = {
    {"exists", StateOp::kExists},
    {"not_exists", StateOp::kNotExists},
    {"equals", StateOp::kEquals},
    {"not_equals", StateOp::kNotEquals},
    {"equals_ci", StateOp::kEqualsCi},
    {"contains", StateOp::kContains},
    {"contains_ci", StateOp::kContainsCi},
    {"not_contains", StateOp::kNotContains},
    {"gt", StateOp::kGt},
    {"gte", StateOp::kGte},
    {"lt", StateOp::kLt},
    {"lte", StateOp::kLte},
    {"in", StateOp::kIn},
    {"not_in", StateOp::kNotIn},
    {"regex", StateOp::kRegex},
    {"not_regex", StateOp::kNotRegex},
    {"len_gt", StateOp::kLenGt},
    {"len_gte", StateOp::kLenGte},
    {"date_gt", StateOp::kDateGt},
    {"date_gte", StateOp::kDateGte},
    {"date_lt", StateOp::kDateLt},
    {"date_lte", StateOp::kDateLte},
    {"ne", StateOp::kNotEquals},
    {"in_", StateOp::kIn},
    {"matches", StateOp::kRegex},
};

}  // namespace

const char* json_kind(const json::Value& v) {
  if (v.IsString()) return "a string";
  if (v.IsBool()) return "a boolean";
  if (v.IsNumber()) return "a number";
  if (v.IsArray()) return "a list";
  if (v.IsObject()) return "a mapping";
  return "null";
}

std::optional<StateOp> state_op_named(std::string_view name) {
  for (const auto& s : kSpellings)
    if (s.name == name) return s.op;
  return std::nullopt;
}

const char* state_op_name(StateOp op) {
  for (const auto& s : kSpellings)
    if (s.op == op) return s.name.data();
  return "?";
}

std::string state_op_names() {
  std::string out;
  for (const auto& s : kSpellings) out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

Operand operand_of(StateOp op) {
  switch (op) {
    case StateOp::kExists:
    case StateOp::kNotExists:
      return Operand::kNone;
    case StateOp::kEqualsCi:
    case StateOp::kContainsCi:
      return Operand::kText;
    case StateOp::kGt:
    case StateOp::kGte:
    case StateOp::kLt:
    case StateOp::kLte:
      return Operand::kNumber;
    case StateOp::kIn:
    case StateOp::kNotIn:
      return Operand::kList;
    case StateOp::kRegex:
    case StateOp::kNotRegex:
      return Operand::kPattern;
    case StateOp::kLenGt:
    case StateOp::kLenGte:
      return Operand::kCount;
    case StateOp::kDateGt:
    case StateOp::kDateGte:
    case StateOp::kDateLt:
    case StateOp::kDateLte:
      return Operand::kDate;
    case StateOp::kEquals:
    case StateOp::kNotEquals:
    case StateOp::kContains:
    case StateOp::kNotContains:
      return Operand::kAny;
  }
  return Operand::kAny;
}

bool negated(StateOp op) {
  return op == StateOp::kNotEquals || op == StateOp::kNotContains || op == StateOp::kNotIn ||
         op == StateOp::kNotRegex || op == StateOp::kNotExists;
}

std::optional<double> number_in_text(std::string_view text) {
  const std::string t(trim(text));
  if (t.empty() || t.size() > 64) return std::nullopt;
  // strtod also reads "inf", "nan" and hex; a number in a record is decimal.
  for (char c : t)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'))
      return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::string> operand_problem(StateOp op, std::string_view expected_json) {
  const Operand kind = operand_of(op);
  if (kind == Operand::kNone) return std::nullopt;
  json::Document v;
  if (json::parse_document(v, expected_json)) return "is not valid JSON";
  const std::string got = std::string(" (got ") + json_kind(v) + ")";
  switch (kind) {
    case Operand::kText:
      // A number or boolean compares as equals would (YAML writes `equals_ci: 42` unquoted).
      if (v.IsArray() || v.IsObject()) return "compares text case-insensitively; give a string" + got;
      return std::nullopt;
    case Operand::kNumber:
      if (v.IsNumber() || (v.IsString() && number_in_text({v.GetString(), v.GetStringLength()}))) return std::nullopt;
      return "compares numbers; give a number" + got;
    case Operand::kList:
      if (!v.IsArray()) return "needs a list of the values to look for" + got;
      return std::nullopt;
    case Operand::kPattern: {
      if (!v.IsString()) return "needs a regular expression as a string" + got;
      auto re = PythonRegex::compile({v.GetString(), v.GetStringLength()});
      if (!re) return "is not a regular expression that compiles: " + re.error().message;
      return std::nullopt;
    }
    case Operand::kCount:
      if (!(v.IsUint64() || (v.IsDouble() && v.GetDouble() >= 0 && std::floor(v.GetDouble()) == v.GetDouble())))
        return "compares a length; give a whole number, 0 or more" + got;
      return std::nullopt;
    case Operand::kDate:
      if (!v.IsString() || !instant_in_text({v.GetString(), v.GetStringLength()}))
        return "compares dates; give an ISO-8601 date or date-time (2026-03-01, 2026-03-01T09:30:00Z)" + got;
      return std::nullopt;
    case Operand::kNone:
    case Operand::kAny:
      return std::nullopt;
  }
  return std::nullopt;
}

namespace {

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

unsigned days_in_month(long long y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

// `n` digits at `s[at]` as a number, else -1.
long digits(std::string_view s, std::size_t at, std::size_t n) {
  if (at + n > s.size()) return -1;
  long v = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

}  // namespace

std::optional<Instant> instant_in_text(std::string_view s) {
  const long y = digits(s, 0, 4), mo = digits(s, 5, 2), d = digits(s, 8, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || s[4] != '-' || s[7] != '-') return std::nullopt;
  if (static_cast<unsigned>(d) > days_in_month(y, static_cast<unsigned>(mo))) return std::nullopt;
  Instant t{days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400, 0};
  if (s.size() == 10) return t;
  const long h = digits(s, 11, 2), mi = digits(s, 14, 2), sec = digits(s, 17, 2);
  if (s[10] != 'T' || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 || s[13] != ':' || s[16] != ':')
    return std::nullopt;
  t.seconds += h * 3600 + mi * 60 + sec;
  std::size_t at = 19;
  if (at < s.size() && s[at] == '.') {
    std::size_t n = 0;
    long scale = 100000;
    for (++at; at < s.size() && std::isdigit(static_cast<unsigned char>(s[at])); ++at, ++n) {
      t.micros += (s[at] - '0') * scale;
      scale /= 10;
    }
    if (n == 0 || n > 9) return std::nullopt;
  }
  if (at == s.size()) return t;
  if (s[at] == 'Z' && at + 1 == s.size()) return t;
  const long oh = digits(s, at + 1, 2), om = digits(s, at + 4, 2);
  if ((s[at] != '+' && s[at] != '-') || oh < 0 || oh > 23 || om < 0 || om > 59 || s.size() != at + 6 ||
      s[at + 3] != ':')
    return std::nullopt;
  const long offset = oh * 3600 + om * 60;
  t.seconds += s[at] == '+' ? -offset : offset;
  return t;
}

}  // namespace forge::manifest
