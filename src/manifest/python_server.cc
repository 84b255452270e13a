// Where a task's Python lives, and what of it a tool server may see.
#include "manifest/python_server.h"

#include <algorithm>
#include <filesystem>

namespace forge::manifest {

namespace fs = std::filesystem;

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Whether `inner` is `outer` or lies below it (both absolute and normal).
bool within(const fs::path& inner, const fs::path& outer) {
  auto rel = inner.lexically_relative(outer);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

Result<std::string> python_root(const std::string& task_dir, const std::vector<std::string>& paths) {
  const fs::path task = fs::path(task_dir).lexically_normal() / "";  // "/x/task/", whichever way it was written
  fs::path root = task.parent_path();
  int levels = 0;  // how far root has climbed above the task directory
  for (const auto& p : paths) {
    const fs::path path = fs::path(p).lexically_normal();
    while (!within(path, root)) {
      if (root == root.root_path() || ++levels > kMaxParentLevels)
        return fail(Errc::kForbidden, "'" + path.lexically_relative(task.parent_path()).string() + "' lies more than " +
                                          std::to_string(kMaxParentLevels) + " levels above the task directory");
      root = root.parent_path();
    }
  }
  return root.string();
}

bool server_copy_skips(std::string_view rel, bool dir) {
  const std::string name = lower(fs::path(rel).filename().string());
  if (name.rfind("solution", 0) == 0) return true;
  if (dir) return name == "tests" || name == "__pycache__" || name == ".git";
  static const char* const kFiles[] = {"grading.yaml", "grading.yml", "task.yaml", "task.yml", "task.toml", "checks.py"};
  for (const char* f : kFiles)
    if (name == f) return true;
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".pyc") == 0;
}

}  // namespace forge::manifest
