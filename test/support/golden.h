// Golden JSON files for request-shape tests: compare by meaning, rewrite with FORGECTL_UPDATE_GOLDEN=1.
#pragma once

#include <doctest/doctest.h>
#include <rapidjson/prettywriter.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <source_location>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "support/paths.h"

namespace forge::test {

inline std::filesystem::path golden_dir() {
  std::filesystem::path data = test_data_dir();
  return data / "golden";
}

// Sorted keys, two-space indentation, one value per line: stable text for files and diffs.
inline std::string golden_pretty(std::string_view json) {
  auto canon = forge::json::canonical(json);
  if (!canon) return std::string(json);
  rapidjson::Document doc;  // parsing keeps the (sorted) member order
  doc.Parse(canon->data(), canon->size());
  rapidjson::StringBuffer buf;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
  w.SetIndent(' ', 2);
  doc.Accept(w);
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

inline std::vector<std::string> golden_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// A unified-style line diff (LCS): "-" lines only in the golden, "+" lines only in the actual.
inline std::string golden_diff(const std::string& expected, const std::string& actual) {
  auto a = golden_lines(expected), b = golden_lines(actual);
  std::vector<std::vector<int>> lcs(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (std::size_t i = a.size(); i-- > 0;)
    for (std::size_t j = b.size(); j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::string out;
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      out += "   " + a[i] + "\n";
      ++i, ++j;
    } else if (i < a.size() && (j == b.size() || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out += " - " + a[i++] + "\n";
    } else {
      out += " + " + b[j++] + "\n";
    }
  }
  return out;
}

// Compares `actual_json` with test/data/golden/<name>.json, key order insensitive.
// With FORGECTL_UPDATE_GOLDEN=1 the file is (re)written instead; read it before committing it.
inline void check_golden(std::string_view name, std::string_view actual_json,
                         std::source_location loc = std::source_location::current()) {
  const std::filesystem::path file = golden_dir() / (std::string(name) + ".json");
  auto actual = forge::json::canonical(actual_json);
  if (!actual) {
    ADD_FAIL_CHECK_AT(loc.file_name(), static_cast<int>(loc.line()),
                      "golden '" << name << "': the actual value is not JSON: " << actual.error().what());
    return;
  }
  const char* update = std::getenv("FORGECTL_UPDATE_GOLDEN");
  if (update && std::string_view(update) == "1") {
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << golden_pretty(*actual);
    if (!out)
      ADD_FAIL_CHECK_AT(loc.file_name(), static_cast<int>(loc.line()), "golden '" << name << "': cannot write " << file);
    else
      MESSAGE("golden '" << std::string(name) << "' written to " << file.string());
    return;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    ADD_FAIL_CHECK_AT(loc.file_name(), static_cast<int>(loc.line()),
                      "golden '" << name << "' is missing (" << file
                                 << "); run with FORGECTL_UPDATE_GOLDEN=1 to create it, then read it. Actual:\n"
                                 << golden_pretty(*actual));
    return;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto expected = forge::json::canonical(ss.str());
  if (!expected) {
    ADD_FAIL_CHECK_AT(loc.file_name(), static_cast<int>(loc.line()),
                      "golden '" << name << "' (" << file << ") is not valid JSON: " << expected.error().what());
    return;
  }
  if (*expected != *actual)
    ADD_FAIL_CHECK_AT(loc.file_name(), static_cast<int>(loc.line()),
                      "request differs from golden '" << name << "' (" << file << "); - golden, + actual:\n"
                                                      << golden_diff(golden_pretty(*expected), golden_pretty(*actual)));
}

}  // namespace forge::test

namespace forge::test {

// Compares `actual` text with test/data/golden/<file> byte for byte (HTML fragments, reports);
// FORGECTL_UPDATE_GOLDEN=1 rewrites the file instead.
inline void check_golden_text(std::string_view file_name, const std::string& actual,
                              std::source_location loc = std::source_location::current()) {
  const std::filesystem::path file = golden_dir() / std::string(file_name);
  const char* update = std::getenv("FORGECTL_UPDATE_GOLDEN");
  if (update && std::string_view(update) == "1") {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << actual;
    MESSAGE("golden '" << std::string(file_name) << "' written to " << file.string());
    return;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    ADD_FAIL_CHECK_AT(loc.file_name(), static_cast<int>(loc.line()),
                      "golden '" << file_name << "' is missing; run with FORGECTL_UPDATE_GOLDEN=1. Actual:\n"
                                 << actual);
    return;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  if (ss.str() != actual)
    ADD_FAIL_CHECK_AT(loc.file_name(), static_cast<int>(loc.line()),
                      "golden '" << file_name << "' differs:\n"
                                 << golden_diff(ss.str(), actual));
}

}  // namespace forge::test
