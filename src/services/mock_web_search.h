// mock-web's search page, GET /search?q=…: where the browser tool's `search` action lands instead
// of a real search engine. It searches the pages mock-web itself serves from its root (the task's
// www/): a result is a page holding every word of the query, ranked by how often they occur, with
// its title, link and a snippet. Bounded: the query, the pages read, the results.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "services/http_server.h"

namespace forge::services {

inline constexpr std::size_t kMaxSearchQuery = 256;   // bytes, decoded; longer: 400
inline constexpr std::size_t kMaxSearchPages = 2000;  // files looked at under the root
inline constexpr std::size_t kMaxSearchResults = 20;

// The page for `query_string` (the request's query, still percent-encoded: q=red+shoes) over the
// .html/.htm/.txt files under `root` (canonical) of at most `max_file` bytes, withheld names and
// symlinks skipped. An empty or missing q gives the search form alone.
Response search_page(const std::string& root, std::string_view query_string, std::size_t max_file);

}  // namespace forge::services
