// mock-web's /search: a linear scan of the served pages (a task's www/ is small), not an index.
#include "services/mock_web_search.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <vector>

#include "core/strings.h"
#include "core/web_files.h"

namespace forge::services {

namespace fs = std::filesystem;

namespace {

struct Page {
  std::string path;  // "/shop/index.html"
  std::string title, text;
};

struct Hit {
  const Page* page;
  std::size_t score;
  std::size_t first;  // offset of the first query word in the text
};

// q's value from a query string: '+' is a space, then percent-decoded; nullopt when malformed.
std::optional<std::string> query_value(std::string_view qs) {
  for (std::string_view rest = qs; !rest.empty();) {
    auto amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    if (pair.substr(0, 2) == "q=") {
      std::string raw(pair.substr(2));
      std::replace(raw.begin(), raw.end(), '+', ' ');
      return percent_decode(raw);
    }
    if (amp == std::string_view::npos) break;
    rest.remove_prefix(amp + 1);
  }
  return std::string();
}

std::vector<std::string> words_of(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) || (c & 0x80))
      cur += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!cur.empty())
      out.push_back(std::move(cur)), cur.clear();
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

// The common entities a page's words are written with, decoded for matching and the snippet.
void append_decoded(std::string& out, std::string_view html, std::size_t& i) {
  static constexpr std::pair<std::string_view, char> kEntities[] = {{"&amp;", '&'},  {"&lt;", '<'},   {"&gt;", '>'},
                                                                    {"&quot;", '"'}, {"&#39;", '\''}, {"&nbsp;", ' '}};
  for (const auto& [name, c] : kEntities)
    if (html.substr(i, name.size()) == name) {
      out += c;
      i += name.size();
      return;
    }
  out += html[i++];
}

// The text a reader sees: tags dropped, script and style elements with their content, whitespace
// folded, common entities decoded.
std::string visible_text(std::string_view html) {
  const std::string lower = to_lower(html);
  std::string out;
  for (std::size_t i = 0; i < html.size();) {
    if (std::isspace(static_cast<unsigned char>(html[i]))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
      ++i;
      continue;
    }
    if (html[i] != '<') {
      append_decoded(out, html, i);
      continue;
    }
    std::size_t end = lower.find('>', i);
    for (std::string element : {"script", "style"})
      if (lower.compare(i + 1, element.size(), element) == 0) {
        const auto close = lower.find("</" + element, i);
        end = close == std::string::npos ? close : lower.find('>', close);
      }
    if (end == std::string::npos) break;
    if (!out.empty() && out.back() != ' ') out += ' ';
    i = end + 1;
  }
  return trim(out);
}

std::string title_of(std::string_view html, const std::string& path) {
  const std::string lower = to_lower(html);
  auto open = lower.find("<title");
  auto start = open == std::string::npos ? open : lower.find('>', open);
  auto close = start == std::string::npos ? start : lower.find("</title", start);
  if (close == std::string::npos) return path;
  std::string t = visible_text(html.substr(start + 1, close - start - 1));
  return t.empty() ? path : t;
}

bool searchable(const fs::directory_entry& e, const std::string& root, std::size_t max_file) {
  std::error_code ec;
  if (e.is_symlink(ec) || !e.is_regular_file(ec)) return false;
  const std::string name = to_lower(e.path().filename().string());
  if (!(name.ends_with(".html") || name.ends_with(".htm") || name.ends_with(".txt"))) return false;
  for (const auto& part : fs::relative(e.path(), root, ec))
    if (is_withheld_name(part.string())) return false;
  return !ec && e.file_size(ec) <= max_file && !ec;
}

std::vector<Page> read_pages(const std::string& root, std::size_t max_file) {
  std::vector<Page> pages;
  std::error_code ec;
  std::size_t seen = 0;
  for (fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (++seen > kMaxSearchPages) break;
    if (it->is_symlink(ec)) {
      it.disable_recursion_pending();
      continue;
    }
    if (is_withheld_name(it->path().filename().string()) && it->is_directory(ec)) {
      it.disable_recursion_pending();
      continue;
    }
    if (!searchable(*it, root, max_file)) continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::string body((std::istreambuf_iterator<char>(in)), {});
    const std::string path = "/" + fs::relative(it->path(), root, ec).generic_string();
    const bool html = !to_lower(path).ends_with(".txt");
    pages.push_back({path, html ? title_of(body, path) : path, html ? visible_text(body) : trim(body)});
  }
  return pages;
}

std::optional<Hit> match(const Page& p, const std::vector<std::string>& query) {
  const std::vector<std::string> words = words_of(p.title + " " + p.text);
  Hit h{&p, 0, std::string::npos};
  for (const auto& q : query) {
    const auto n = static_cast<std::size_t>(std::count(words.begin(), words.end(), q));
    if (n == 0) return std::nullopt;
    h.score += n;
    h.first = std::min(h.first, to_lower(p.text).find(q));
  }
  return h;
}

std::string snippet(const Hit& h) {
  const std::string& t = h.page->text;
  const std::size_t from = h.first == std::string::npos || h.first < 60 ? 0 : h.first - 60;
  return (from ? "…" : "") + valid_utf8(t.substr(from, 200)) + (from + 200 < t.size() ? "…" : "");
}

std::string page_html(const std::string& q, const std::vector<Hit>& hits, bool searched) {
  std::string out = "<!doctype html><html><head><meta charset=\"utf-8\"><title>Search" +
                    (q.empty() ? std::string() : ": " + html_escape(q)) +
                    "</title></head><body><form action=\"&#47;search\" method=\"get\"><input name=\"q\" value=\"" +
                    html_escape(q) + "\"> <button type=\"submit\">Search</button></form>";
  if (searched && hits.empty()) out += "<p id=\"no-results\">No pages match.</p>";
  if (!hits.empty()) out += "<ol id=\"results\">";
  for (const auto& h : hits)
    out += "<li><a href=\"" + html_escape(h.page->path) + "\">" + html_escape(h.page->title) + "</a><p>" +
           html_escape(snippet(h)) + "</p></li>";
  if (!hits.empty()) out += "</ol>";
  return out + "</body></html>";
}

}  // namespace

Response search_page(const std::string& root, std::string_view query_string, std::size_t max_file) {
  auto q = query_value(query_string);
  if (!q) return json_error(400, "malformed percent-encoding in the query");
  if (q->size() > kMaxSearchQuery)
    return json_error(400, "the query is longer than " + std::to_string(kMaxSearchQuery) + " bytes");
  const std::string query = valid_utf8(trim(*q));
  const std::vector<std::string> words = words_of(query);
  std::vector<Page> pages;
  std::vector<Hit> hits;
  if (!words.empty()) pages = read_pages(root, max_file);
  for (const auto& p : pages)
    if (auto h = match(p, words)) hits.push_back(*h);
  std::stable_sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) {
    return a.score != b.score ? a.score > b.score : a.page->path < b.page->path;
  });
  if (hits.size() > kMaxSearchResults) hits.resize(kMaxSearchResults);
  Response r{200, "text/html; charset=utf-8", page_html(query, hits, !words.empty()), {}};
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

}  // namespace forge::services
