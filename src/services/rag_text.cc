// Passages, titles and query words for the rag service; every loop is a single pass.
#include "services/rag_text.h"

#include <set>

namespace forge::services {

namespace {

constexpr std::string_view kSpace = " \t\r\n";
// A title is looked for in this many first lines: a heading further down names a section.
constexpr int kTitleLines = 20;

std::string_view trim_view(std::string_view s) {
  auto b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

bool is_blank(std::string_view line) { return line.find_first_not_of(kSpace) == std::string_view::npos; }

// Maximal runs of non-blank lines.
std::vector<std::string_view> paragraphs(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = std::string_view::npos, end = 0;
  for (std::size_t pos = 0; pos <= text.size();) {
    std::size_t nl = text.find('\n', pos);
    std::size_t stop = nl == std::string_view::npos ? text.size() : nl;
    if (is_blank(text.substr(pos, stop - pos))) {
      if (start != std::string_view::npos) out.push_back(text.substr(start, end - start));
      start = std::string_view::npos;
    } else {
      if (start == std::string_view::npos) start = pos;
      end = stop;
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  if (start != std::string_view::npos) out.push_back(text.substr(start, end - start));
  return out;
}

// Where to cut `p` (longer than `max_bytes`): after its last whitespace within the limit, or at the
// last character boundary within it. Always at least one byte, so every cut makes progress.
std::size_t cut_point(std::string_view p, std::size_t max_bytes) {
  std::string_view head = utf8_prefix(p, max_bytes);
  auto ws = head.find_last_of(kSpace);
  if (ws != std::string_view::npos && ws > 0) return ws;
  return head.empty() ? 1 : head.size();
}

bool is_word_byte(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

// "## Refunds ##" → "Refunds"; empty when `line` is no ATX heading.
std::string_view heading_text(std::string_view line) {
  line = trim_view(line);
  std::size_t level = line.find_first_not_of('#');
  if (level == 0 || level == std::string_view::npos || level > 6 || (line[level] != ' ' && line[level] != '\t'))
    return {};
  std::string_view text = trim_view(line.substr(level));
  while (!text.empty() && text.back() == '#') text.remove_suffix(1);
  return trim_view(text);
}

}  // namespace

std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  std::size_t i = max_bytes;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  return s.substr(0, i);
}

std::vector<std::string> split_passages(std::string_view text, std::size_t max_bytes) {
  std::vector<std::string> out;
  std::string_view whole = trim_view(text);
  if (whole.empty()) return out;
  if (whole.size() <= max_bytes) {
    out.emplace_back(whole);
    return out;
  }
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) out.push_back(std::move(cur));
    cur.clear();
  };
  for (std::string_view p : paragraphs(whole)) {
    p = trim_view(p);
    while (p.size() > max_bytes) {
      flush();
      std::size_t cut = cut_point(p, max_bytes);
      if (auto piece = trim_view(p.substr(0, cut)); !piece.empty()) out.emplace_back(piece);
      p = trim_view(p.substr(cut));
    }
    if (p.empty()) continue;
    // A heading starts a section: it opens a passage instead of closing the one before.
    if (!cur.empty() && (cur.size() + 2 + p.size() > max_bytes || !heading_text(p.substr(0, p.find('\n'))).empty()))
      flush();
    if (!cur.empty()) cur += "\n\n";
    cur += p;
  }
  flush();
  return out;
}

std::string document_title(std::string_view text, std::string_view fallback, std::size_t max_bytes) {
  std::string_view first;
  int lines = 0;
  for (std::size_t pos = 0; pos < text.size() && lines < kTitleLines; ++lines) {
    std::size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    if (auto h = heading_text(line); !h.empty()) return std::string(utf8_prefix(h, max_bytes));
    if (first.empty() && !is_blank(line)) first = trim_view(line);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return std::string(utf8_prefix(first.empty() ? fallback : first, max_bytes));
}

Result<std::vector<std::string>> query_terms(std::string_view query) {
  if (query.size() > limits::kMaxRagQueryBytes)
    return fail(Errc::kInvalid, "the query is " + std::to_string(query.size()) + " bytes, over the limit of " +
                                    std::to_string(limits::kMaxRagQueryBytes) + "; ask with fewer words");
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < query.size();) {
    if (!is_word_byte(static_cast<unsigned char>(query[i]))) {
      ++i;
      continue;
    }
    std::string word;
    for (; i < query.size() && is_word_byte(static_cast<unsigned char>(query[i])); ++i) {
      char c = query[i];
      word += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    if (!seen.insert(word).second) continue;
    if (out.size() == limits::kMaxRagQueryTerms)
      return fail(Errc::kInvalid, "the query has more than " + std::to_string(limits::kMaxRagQueryTerms) +
                                      " distinct words; ask with fewer");
    out.push_back(std::move(word));
  }
  if (out.empty()) return fail(Errc::kInvalid, "the query has no words to search for");
  return out;
}

std::string match_expression(const std::vector<std::string>& terms) {
  std::string out;
  for (const auto& t : terms) {
    if (!out.empty()) out += " OR ";
    // A term holds letters, digits and non-ASCII bytes only: no quote to escape.
    out += '"' + t + '"';
  }
  return out;
}

}  // namespace forge::services
