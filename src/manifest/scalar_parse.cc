// Parsers for the scalar forms manifests share: memory sizes, durations, shell words, names.
#include "manifest/scalar_parse.h"

#include <cctype>
#include <charconv>
#include <cmath>

namespace forge::manifest {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// A non-negative decimal number "12" or "1.5" at the front of `s`; consumes it.
std::optional<double> take_number(std::string_view& s) {
  std::size_t i = 0;
  while (i < s.size() && is_digit(s[i])) ++i;
  std::size_t int_digits = i;
  std::size_t frac_digits = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i, ++frac_digits;
  }
  if (int_digits + frac_digits == 0) return std::nullopt;
  double v = 0;  // from_chars: no locale, unlike strtod
  auto [p, ec] = std::from_chars(s.data(), s.data() + i, v);
  if (ec != std::errc() || p != s.data() + i) return std::nullopt;
  s.remove_prefix(i);
  return v;
}

}  // namespace

std::optional<std::int64_t> parse_memory(std::string_view text) {
  std::string_view s = text;
  auto n = take_number(s);
  if (!n) return std::nullopt;
  if (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  double mult = 1;
  if (!s.empty()) {
    switch (lower(s.front())) {
      case 'k':
        mult = 1024.0;
        break;
      case 'm':
        mult = 1024.0 * 1024;
        break;
      case 'g':
        mult = 1024.0 * 1024 * 1024;
        break;
      case 't':
        mult = 1024.0 * 1024 * 1024 * 1024;
        break;
      case 'b':
        break;
      default:
        return std::nullopt;
    }
    if (lower(s.front()) != 'b') {
      s.remove_prefix(1);
      if (!s.empty() && lower(s.front()) == 'i') s.remove_prefix(1);
      if (!s.empty() && lower(s.front()) == 'b') s.remove_prefix(1);
    } else {
      s.remove_prefix(1);
    }
  }
  if (!s.empty()) return std::nullopt;
  double bytes = *n * mult;
  if (bytes > 9.0e18) return std::nullopt;
  return static_cast<std::int64_t>(bytes);
}

std::optional<Millis> parse_duration(std::string_view text) {
  std::string_view s = text;
  if (s == "0") return Millis(0);
  if (s.empty()) return std::nullopt;
  double ns = 0;
  while (!s.empty()) {
    auto n = take_number(s);
    if (!n) return std::nullopt;
    std::size_t u = 0;
    while (u < s.size() && std::isalpha(static_cast<unsigned char>(s[u]))) ++u;
    std::string_view unit = s.substr(0, u);
    s.remove_prefix(u);
    double scale;
    if (unit == "ns")
      scale = 1;
    else if (unit == "us" || unit == "\xC2\xB5s")
      scale = 1e3;
    else if (unit == "ms")
      scale = 1e6;
    else if (unit == "s")
      scale = 1e9;
    else if (unit == "m")
      scale = 60e9;
    else if (unit == "h")
      scale = 3600e9;
    else
      return std::nullopt;
    ns += *n * scale;
  }
  if (ns > 1e18) return std::nullopt;
  if (ns > 0 && ns < 1e6) return Millis(1);
  return Millis(static_cast<std::int64_t>(std::llround(std::floor(ns / 1e6))));
}

Result<std::vector<std::string>> shell_split(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;  // "" is a word even though it adds no characters
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::move(word)), word.clear(), in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\') {
      if (i + 1 == text.size()) return fail(Errc::kInvalid, "trailing backslash");
      word += text[++i];
    } else if (c == '\'') {
      std::size_t end = text.find('\'', i + 1);
      if (end == std::string_view::npos) return fail(Errc::kInvalid, "unterminated single quote");
      word.append(text.substr(i + 1, end - i - 1));
      i = end;
    } else if (c == '"') {
      ++i;
      for (;; ++i) {
        if (i == text.size()) return fail(Errc::kInvalid, "unterminated double quote");
        if (text[i] == '"') break;
        if (text[i] == '\\' && i + 1 < text.size() &&
            (text[i + 1] == '"' || text[i + 1] == '\\' || text[i + 1] == '$' || text[i + 1] == '`')) {
          ++i;
        }
        word += text[i];
      }
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

bool is_env_name(std::string_view name) {
  if (name.empty() || is_digit(name.front())) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

bool is_service_name(std::string_view name) {
  if (name.empty()) return false;
  auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || is_digit(c); };
  if (!lower_alnum(name.front())) return false;
  for (char c : name) {
    if (!(lower_alnum(c) || c == '_' || c == '.' || c == '-')) return false;
  }
  return true;
}

}  // namespace forge::manifest
