// Lexical confinement of tool paths to the workspace.
#include "tools/workspace_path.h"

#include <vector>

namespace forge::tools {

static bool strip_prefix(std::string_view& p, std::string_view prefix) {
  if (prefix.empty() || p.substr(0, prefix.size()) != prefix) return false;
  if (p.size() != prefix.size() && p[prefix.size()] != '/') return false;
  p.remove_prefix(prefix.size());
  return true;
}

Result<std::string> workspace_relative(std::string_view path, std::string_view workspace) {
  std::string shown(path);
  if (path.find('\0') != std::string_view::npos) return fail(Errc::kInvalid, "path contains a NUL byte");
  std::string_view p = path;
  if (!p.empty() && p.front() == '/') {
    if (!strip_prefix(p, workspace) && !strip_prefix(p, kLegacyWorkspace))
      return fail(Errc::kForbidden, "path '" + shown + "' is outside the workspace (" + std::string(workspace) + ")");
  }
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (i <= p.size()) {
    std::size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    std::string_view part = p.substr(i, j - i);
    if (part == "..") {
      if (parts.empty())
        return fail(Errc::kForbidden, "path '" + shown + "' is outside the workspace (" + std::string(workspace) + ")");
      parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.emplace_back(part);
    }
    i = j + 1;
  }
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : "/") + part;
  return out;
}

}  // namespace forge::tools
