// Reason formatting shared by the grading components.
#include "grading/component.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace forge::grading {

namespace {

// The longest prefix of `s` no longer than `max_bytes` that does not split a UTF-8 character.
std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  std::size_t n = max_bytes;
  // Back off continuation bytes (10xxxxxx) so that a multi-byte character stays whole.
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

}  // namespace

double clamp01(double v) {
  if (std::isnan(v)) return 0;
  return std::clamp(v, 0.0, 1.0);
}

Status check_score(double v, std::string_view what) {
  if (std::isfinite(v) && v >= 0 && v <= 1) return {};
  return fail(Errc::kInvalid, std::string(what) + " is " + format_score(v) + ", not a number in [0, 1]");
}

std::string format_score(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string truncate_utf8(std::string_view s, std::size_t max_bytes) {
  std::string_view head = utf8_prefix(s, max_bytes);
  if (head.size() == s.size()) return std::string(s);
  return std::string(head) + "… [truncated " + std::to_string(s.size() - head.size()) + " bytes]";
}

std::string quote(std::string_view s, std::size_t max_bytes) {
  std::string_view head = utf8_prefix(s, max_bytes);
  json::Writer w;  // JSON string escaping turns newlines and other control characters into \n, \u0001…
  w.str(head);
  std::string out = w.take();
  if (head.size() < s.size()) out.insert(out.size() - 1, "…");
  return out;
}

std::string json_excerpt(const json::Value& v, std::size_t max_bytes) {
  std::string text = json::to_string(v);
  std::string_view head = utf8_prefix(text, max_bytes);
  return head.size() == text.size() ? text : std::string(head) + "…";
}

bool contains_ci(std::string_view haystack, std::string_view needle) {
  auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                        [](char a, char b) { return lower(a) == lower(b); });
  return it != haystack.end() || needle.empty();
}

bool equals_ci(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

}  // namespace forge::grading
