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

bool under(const std::string& rel, const std::string& top) {
  return rel == top || (rel.size() > top.size() && rel.compare(0, top.size(), top) == 0 && rel[top.size()] == '/');
}

// Which files a part of the task directory may give mock-web: www/ and mock_web/ are pages meant
// for the web, any page or asset type (page_content_type); the task directory itself holds the
// task's data too, so only pages and static assets (is_page_asset_type) come from it.
using TypeRule = bool (*)(const std::string& name);
bool web_type(const std::string& name) { return page_content_type(name).has_value(); }
bool asset_type(const std::string& name) { return is_page_asset_type(name); }

// A withheld name prunes a directory; a file must be of the part's types.
bool skip_name_or_type(const std::string& rel, EntryKind kind, TypeRule type) {
  std::string name = last_name(rel);
  if (is_withheld_name(name)) return true;
  return kind != EntryKind::kDirectory && !type(name);
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
  add(t.initial_state.rag_corpus_dir);
  for (const auto& f : t.initial_state.filesystem_copy) add(f.from);
  add(t.system_prompt_file);
  add(t.solution.script);
  if (const auto& m = t.environment.tools.mcp_server) {
    for (const auto& f : m->files) add(f);
    if (m->python()) add((fs::path(m->root) / m->script).string());
  }
  return out;
}

// Whether the task directory itself lies in a Python tool server's tree (python_server.h): its
// root is the task directory or a project directory above it, and all of that tree but grading
// assets is copied beside the server — its seed state and data files, which the agent must only
// reach through the server's tools. Then the task directory gives mock-web nothing of its own.
bool in_server_tree(const TaskConfig& t) {
  const auto& m = t.environment.tools.mcp_server;
  if (!m || !m->python() || m->root.empty()) return false;
  std::string rel = fs::path(t.dir).lexically_normal().lexically_relative(fs::path(m->root).lexically_normal()).string();
  return !rel.empty() && rel.rfind("..", 0) != 0;
}

// A symlink is judged by where it lands as well as by its own name: a page-named link to
// grading.yaml would otherwise be copied as that page, a regular file in mock-web. It must land
// inside `home` (the task-directory-relative part it is in: "www", "mock_web", or "" for the task
// directory), on a file of `type` with no withheld component and no task input. A link that
// lands outside the task directory, or nowhere, is left to the walk, which refuses it.
bool link_excluded(const std::string& task_dir, const std::string& rel, const std::string& home, TypeRule type,
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
  // A link in www/ or mock_web/ onto the rest of the task directory would serve that file under
  // the web part's wider types: only links that stay in their own part count.
  if (!home.empty() && !(in.size() > home.size() && under(in, home))) return true;
  if (home.empty() && (under(in, "www") || under(in, "mock_web"))) return true;  // judged by its own part
  for (const auto& part : fs::path(in))
    if (is_withheld_name(part.string())) return true;
  if (fs::is_directory(real, ec) || !type(real.filename().string())) return true;
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
    return skip_name_or_type(rel, kind, web_type) || link_excluded(task_dir.root(), "www/" + rel, "www", web_type, inputs);
  };
  return task_dir.walk("www", kTestsLimits, skip, [&](const TreeEntry& e) -> Status {
    return e.kind == EntryKind::kDirectory ? Status() : visit(e);
  });
}

Status walk_task_pages(const TaskConfig& t, const ConfinedDir& task_dir, const PageVisit& visit) {
  const std::vector<std::string> inputs = task_inputs(t);
  const bool server_tree = in_server_tree(t);
  auto skip = [&](const std::string& rel, EntryKind kind) {
    if (rel == "www") return true;  // www/ is mock-web's other root
    for (const auto& in : inputs)
      if (under(rel, in)) return true;
    if (under(rel, "mock_web"))
      return skip_name_or_type(rel, kind, web_type) || link_excluded(task_dir.root(), rel, "mock_web", web_type, inputs);
    if (server_tree) return true;
    return skip_name_or_type(rel, kind, asset_type) || link_excluded(task_dir.root(), rel, "", asset_type, inputs);
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
