// Python-flavoured transcript regexes, compiled as ECMAScript (std::regex).
#include <cctype>

#include "manifest/grading_parse.h"

namespace forge::manifest {

namespace {

Unexpected unsupported(std::string_view what) {
  return fail(Errc::kInvalid, std::string(what) + " is not supported (patterns run as ECMAScript regular expressions)");
}

}  // namespace

Result<std::regex> compile_transcript_regex(std::string_view pattern) {
  auto flags = std::regex::ECMAScript;
  bool dotall = false, multiline = false;
  std::size_t i = 0;
  // Leading global flags, as Python writes them: (?i), (?im), (?i)(?s).
  while (pattern.substr(i, 2) == "(?") {
    std::size_t j = i + 2;
    while (j < pattern.size() && std::isalpha(static_cast<unsigned char>(pattern[j]))) ++j;
    if (j == i + 2 || j >= pattern.size() || pattern[j] != ')') break;
    for (char f : pattern.substr(i + 2, j - i - 2)) {
      switch (f) {
        case 'i': flags |= std::regex::icase; break;
        case 'm': multiline = true; break;
        case 's': dotall = true; break;
        case 'a': case 'u': break;  // ASCII/Unicode classes: std::regex matches bytes either way
        case 'x': return unsupported("the verbose flag (?x)");
        default: return unsupported(std::string("the inline flag '") + f + "'");
      }
    }
    i = j + 1;
  }
  if (multiline) flags |= std::regex::multiline;

  std::string_view rest = pattern.substr(i);
  std::string out;
  bool in_class = false;
  for (std::size_t k = 0; k < rest.size(); ++k) {
    char c = rest[k];
    if (c == '\\') {
      if (k + 1 >= rest.size()) return fail(Errc::kInvalid, "the pattern ends with a backslash");
      char d = rest[++k];
      if (!in_class && (d == 'A' || d == 'Z')) {
        // \A and \Z are ^ and $ as long as those do not also match at line breaks.
        if (multiline) return unsupported(std::string("\\") + d + " together with (?m)");
        out += d == 'A' ? '^' : '$';
      } else {
        out += c;
        out += d;
      }
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      out += c;
      continue;
    }
    if (c == '[') {
      in_class = true;
      out += c;
      if (k + 1 < rest.size() && rest[k + 1] == '^') out += rest[++k];
      // Python reads a ']' first in a class as a literal.
      if (k + 1 < rest.size() && rest[k + 1] == ']') out += "\\]", ++k;
      continue;
    }
    if (c == '.' && dotall) {
      out += "[\\s\\S]";
      continue;
    }
    if (c == '(' && rest.substr(k + 1, 1) == "?") {
      std::string_view ext = rest.substr(k + 2);
      if (ext.substr(0, 2) == "P<") {
        std::size_t close = ext.find('>');
        if (close == std::string_view::npos) return fail(Errc::kInvalid, "unterminated group name in (?P<…>");
        out += '(';  // the group keeps its number; ECMAScript has no names
        k += 2 + close;
        continue;
      }
      if (ext.substr(0, 2) == "P=") return unsupported("the named backreference (?P=…)");
      if (ext.substr(0, 2) == "<=" || ext.substr(0, 2) == "<!") return unsupported("lookbehind");
      if (ext.substr(0, 1) == "<") return unsupported("the named group (?<…>)");
      if (ext.substr(0, 1) == "#") {
        std::size_t close = ext.find(')');
        if (close == std::string_view::npos) return fail(Errc::kInvalid, "unterminated comment (?#…");
        k += 2 + close;
        continue;
      }
      if (!ext.empty() && std::isalpha(static_cast<unsigned char>(ext[0])))
        return unsupported("an inline flag that is not at the start of the pattern");
    }
    out += c;
  }
  try {
    return std::regex(out, flags);
  } catch (const std::regex_error& e) {
    return fail(Errc::kInvalid, std::string("not a valid regular expression: ") + e.what());
  }
}

}  // namespace forge::manifest
