// Task-relative paths: resolved against the task directory and confined to it.
#include <algorithm>
#include <cctype>
#include <filesystem>

#include "manifest/files.h"
#include "manifest/task_reader.h"

namespace forge::manifest {

namespace fs = std::filesystem;

std::optional<std::string> task_path(YamlReader& r, const Field& f, const std::string& what, const std::string& dir,
                                     const std::string& rel, PathKind kind) {
  if (rel.empty()) {
    r.error(f, what + " is empty");
    return std::nullopt;
  }
  if (fs::path(rel).is_absolute()) {
    r.error(f, what + ": '" + rel + "' must be relative to the task directory",
            "task packs move between hosts; an absolute path would not move with them");
    return std::nullopt;
  }
  fs::path full = (fs::path(dir) / rel).lexically_normal();
  if (!is_inside(full, dir)) {
    r.error(f, what + ": '" + rel + "' is outside the task directory",
            "a task reads only its own files; copy what it needs into its directory");
    return std::nullopt;
  }
  FileKind k = file_kind(full);
  if (k == FileKind::kMissing) {
    r.error(f, what + ": '" + rel + "' does not exist");
    return std::nullopt;
  }
  if (kind == PathKind::kFile && k != FileKind::kFile) {
    r.error(f, what + ": '" + rel + "' is not a regular file");
    return std::nullopt;
  }
  if (kind == PathKind::kDirectory && k != FileKind::kDirectory) {
    r.error(f, what + ": '" + rel + "' is not a directory");
    return std::nullopt;
  }
  return full.string();
}

bool is_grading_asset(const std::string& rel) {
  fs::path p = fs::path(rel).lexically_normal();
  if (p.empty()) return false;
  auto low = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
  };
  std::string name = low(p.filename().string());
  std::string first = low(p.begin()->string());
  return name == "grading.yaml" || name == "grading.yml" || first == "tests" || first.rfind("solution", 0) == 0;
}

}  // namespace forge::manifest
