// The filters of task_pages.h.
#include "manifest/task_pages.h"

#include <filesystem>
#include <string>
#include <vector>

#include "core/web_files.h"
#include "manifest/task_dir.h"

namespace forge::manifest {

namespace fs = std::filesystem;

namespace {

// The last component of a walk's relative path.
std::string last_name(const std::string& rel) {
  auto slash = rel.find_last_of('/');
  return slash == std::string::npos ? rel : rel.substr(slash + 1);
}

// Page files only: a withheld name prunes a directory, a file must be of a page type.
bool skip_non_page(const std::string& rel, EntryKind kind) {
  std::string name = last_name(rel);
  if (is_withheld_name(name)) return true;
  return kind != EntryKind::kDirectory && !page_content_type(name);
}

bool under(const std::string& rel, const std::string& top) {
  return rel == top || (rel.size() > top.size() && rel.compare(0, top.size(), top) == 0 && rel[top.size()] == '/');
}

// Task-directory-relative forms of the paths the task names as forgectl's inputs.
std::vector<std::string> task_inputs(const TaskConfig& t) {
  std::vector<std::string> out;
  auto add = [&](const std::string& p) {
    if (p.empty()) return;
    fs::path abs = fs::path(p).is_absolute() ? fs::path(p) : fs::path(t.dir) / p;
    std::string rel = abs.lexically_normal().lexically_relative(fs::path(t.dir).lexically_normal()).string();
    while (!rel.empty() && rel.back() == '/') rel.pop_back();
    if (!rel.empty() && rel != "." && rel.rfind("..", 0) != 0) out.push_back(rel);
  };
  const auto& cc = t.grading.custom_checks;
  add(t.grading.path);
  if (cc.present) add(cc.dir);
  add(cc.checks_file);
  for (const auto& d : cc.relative_imports) add(d);
  add(t.initial_state.json_db_path);
  add(t.system_prompt_file);
  add(t.solution.script);
  return out;
}

// A symlink is judged by where it lands as well as by its own name: a page-named link to
// grading.yaml would otherwise be copied as that page, a regular file in mock-web. A link that
// lands outside the task directory, or nowhere, is left to the walk, which refuses it.
bool link_lands_on_excluded(const std::string& task_dir, const std::string& rel,
                            const std::vector<std::string>& inputs) {
  std::error_code ec;
  const fs::path link = fs::path(task_dir) / rel;
  if (!fs::is_symlink(link, ec)) return false;
  fs::path real = fs::canonical(link, ec);
  if (ec) return false;
  fs::path base = fs::canonical(task_dir, ec);
  if (ec) return false;
  std::string in = real.lexically_relative(base).string();
  if (in.empty() || in == "." || in.rfind("..", 0) == 0) return false;
  for (const auto& part : fs::path(in))
    if (is_withheld_name(part.string())) return true;
  if (!fs::is_directory(real, ec) && !page_content_type(real.filename().string())) return true;
  for (const auto& i : inputs)
    if (under(in, i)) return true;
  return false;
}

}  // namespace

Status walk_www_pages(const TaskConfig& t, const ConfinedDir& task_dir, const PageVisit& visit) {
  auto found = task_dir.stat("www");
  if (!found) return found.fail();
  const std::vector<std::string> inputs = task_inputs(t);
  auto skip = [&](const std::string& rel, EntryKind kind) {
    return skip_non_page(rel, kind) || link_lands_on_excluded(task_dir.root(), "www/" + rel, inputs);
  };
  return task_dir.walk("www", kTestsLimits, skip, [&](const TreeEntry& e) -> Status {
    return e.kind == EntryKind::kDirectory ? Status() : visit(e);
  });
}

Status walk_task_pages(const TaskConfig& t, const ConfinedDir& task_dir, const PageVisit& visit) {
  const std::vector<std::string> inputs = task_inputs(t);
  auto skip = [&](const std::string& rel, EntryKind kind) {
    if (rel == "www" || skip_non_page(rel, kind)) return true;  // www/ is mock-web's other root
    for (const auto& in : inputs)
      if (under(rel, in)) return true;
    return link_lands_on_excluded(task_dir.root(), rel, inputs);
  };
  return task_dir.walk("", kTestsLimits, skip, [&](const TreeEntry& e) -> Status {
    return e.kind == EntryKind::kDirectory ? Status() : visit(e);
  });
}

bool has_task_pages_route(const TaskConfig& t) {
  return !t.harbor && is_route_segment(t.category) && is_route_segment(t.task_id);
}

bool has_mock_web_service(const TaskConfig& t) { return t.environment.compose.find("mock-web") != nullptr; }

}  // namespace forge::manifest
