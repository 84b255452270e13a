// Host patterns and path globs of the egress rules.
#include "manifest/egress_patterns.h"

#include <algorithm>
#include <cctype>

#include "core/limits.h"
#include "core/strings.h"

namespace forge::manifest {

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool label_ok(std::string_view label) {
  return !label.empty() && label.size() <= 63 && label.front() != '-' && label.back() != '-' &&
         std::all_of(label.begin(), label.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_'; });
}

bool ends_with_ci(std::string_view s, std::string_view suffix) {
  if (suffix.size() > s.size()) return false;
  return std::equal(suffix.begin(), suffix.end(), s.end() - static_cast<std::ptrdiff_t>(suffix.size()),
                    [](char a, char b) { return lower(a) == lower(b); });
}

}  // namespace

Result<std::string> normalise_host_pattern(std::string_view raw) {
  std::string s = to_lower(trim(raw));
  if (s.empty()) return fail(Errc::kInvalid, "is empty");
  if (s.find("://") != std::string::npos || s.find('/') != std::string::npos)
    return fail(Errc::kInvalid, "is not a host name: give the name only, without scheme or path");
  if (s.find(':') != std::string::npos) return fail(Errc::kInvalid, "has a port: give the name only");
  if (starts_with(s, "*.")) s.erase(0, 1);
  if (s.find('*') != std::string::npos)
    return fail(Errc::kInvalid,
                "has a wildcard other than a leading '*.': write .example.com for example.com "
                "and all its subdomains");
  if (!s.empty() && s.back() == '.') s.pop_back();
  std::string_view name = std::string_view(s).substr(!s.empty() && s.front() == '.' ? 1 : 0);
  if (name.empty() || name.size() > 253) return fail(Errc::kInvalid, "is not a host name");
  for (std::size_t start = 0;;) {
    std::size_t dot = name.find('.', start);
    if (!label_ok(name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start)))
      return fail(Errc::kInvalid, "is not a host name: letters, digits and '-' between dots");
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return s;
}

bool host_pattern_matches(std::string_view pattern, std::string_view host) {
  if (!host.empty() && host.back() == '.') host.remove_suffix(1);
  if (pattern.empty() || host.empty()) return false;
  if (pattern.front() != '.') return host.size() == pattern.size() && ends_with_ci(host, pattern);
  // ".example.com": example.com itself, or a name ending in ".example.com".
  return ends_with_ci(host, pattern) || (host.size() + 1 == pattern.size() && ends_with_ci(host, pattern.substr(1)));
}

Result<PythonRegex> compile_path_glob(std::string_view glob) {
  if (glob.empty() || glob.front() != '/') return fail(Errc::kInvalid, "must start with '/' (a request path)");
  if (glob.size() > limits::kMaxEgressPathPatternBytes)
    return fail(Errc::kInvalid, "is longer than " + std::to_string(limits::kMaxEgressPathPatternBytes) + " bytes");
  // Compiled to RE2 (through the Python-syntax translator) so that matching is linear in the
  // path, whatever the pattern's stars: a path is the agent's text.
  static constexpr char kHex[] = "0123456789abcdef";
  std::string re = "(?s)\\A";
  for (unsigned char c : glob) {
    if (c == '*') {
      re += ".*";
    } else if (std::isalnum(c) || c >= 0x80) {
      re += static_cast<char>(c);
    } else {
      re += "\\x";
      re += kHex[c >> 4];
      re += kHex[c & 15];
    }
  }
  re += "\\Z";
  auto compiled = PythonRegex::compile(re);
  if (!compiled) return fail(Errc::kInvalid, "does not compile: " + compiled.error().message);
  return compiled;
}

std::string_view path_for_glob(std::string_view path, std::string_view glob) {
  if (glob.find('?') != std::string_view::npos) return path;
  return path.substr(0, path.find('?'));
}

}  // namespace forge::manifest
