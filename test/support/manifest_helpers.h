// What the manifest tests share: substring checks, picking one diagnostic, and a temporary task
// directory to write files into.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/diagnostics.h"

namespace forge::test {

inline bool has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

// The one diagnostic whose message contains `part`; fails the test when there is not exactly one.
inline manifest::Diagnostic only(const manifest::Diagnostics& diags, std::string_view part) {
  std::vector<manifest::Diagnostic> found;
  for (const auto& d : diags.items())
    if (has(d.message, part)) found.push_back(d);
  INFO("looking for: " << part << "\nin: " << diags.to_error().message);
  REQUIRE(found.size() == 1);
  return found.front();
}

// A directory under /tmp (prefix `stem`), removed at exit; write() creates parent directories.
class TempFiles {
 public:
  explicit TempFiles(const std::string& stem) {
    std::random_device rd;
    dir_ = std::filesystem::temp_directory_path() / (stem + std::to_string(rd()));
    std::filesystem::create_directories(dir_);
  }
  ~TempFiles() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TempFiles(const TempFiles&) = delete;
  TempFiles& operator=(const TempFiles&) = delete;

  std::string write(const std::string& rel, const std::string& text) const {
    std::filesystem::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
    return (dir_ / rel).string();
  }
  std::string file(const std::string& rel) const { return (dir_ / rel).string(); }
  std::string dir() const { return dir_.string(); }

 private:
  std::filesystem::path dir_;
};

}  // namespace forge::test
