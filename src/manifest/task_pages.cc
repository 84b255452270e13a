// The filters of task_pages.h.
#include "manifest/task_pages.h"

#include <filesystem>
#include <optional>
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

// A path the task names as forgectl's input, task-directory-relative, and the key that names it.
struct Input {
  std::string rel;
  std::string key;  // "grading", "solution.script"
};
using Inputs = std::vector<Input>;

// Task-directory-relative forms of the paths the task names as forgectl's inputs: as written,
// and as resolved through symlinks (grading: g/grade.json with g -> www is www/grade.json).
Inputs task_inputs(const TaskConfig& t) {
  Inputs out;
  std::error_code ec;
  const fs::path dir = fs::path(t.dir).lexically_normal();
  const fs::path real_dir = fs::canonical(dir, ec);
  auto keep = [&](const fs::path& abs, const fs::path& base, const std::string& key) {
    std::string rel = abs.lexically_normal().lexically_relative(base).string();
    while (!rel.empty() && rel.back() == '/') rel.pop_back();
    if (!rel.empty() && rel != "." && rel.rfind("..", 0) != 0) out.push_back({rel, key});
  };
  auto add = [&](const std::string& p, const std::string& key) {
    if (p.empty()) return;
    fs::path abs = fs::path(p).is_absolute() ? fs::path(p) : dir / p;
    keep(abs, dir, key);
    std::error_code e2;
    fs::path real = fs::weakly_canonical(abs, e2);
    if (!e2 && !real_dir.empty()) keep(real, real_dir, key);
  };
  const auto& cc = t.grading.custom_checks;
  add(t.grading.path, "grading");
  if (cc.present) add(cc.dir, "custom_checks.dir");
  add(cc.checks_file, "custom_checks.file");
  for (const auto& d : cc.relative_imports) add(d, "custom_checks.relative_imports");
  add(t.initial_state.json_db_path, "initial_state.json_db");
  add(t.initial_state.rag_corpus_dir, "initial_state.rag.corpus_dir");
  for (const auto& f : t.initial_state.filesystem_copy) add(f.from, "initial_state.filesystem.copy");
  add(t.system_prompt_file, "system_prompt");
  add(t.solution.script, "solution.script");
  add(t.environment.manifest.setup_script, "environment.setup_script");
  if (const auto& m = t.environment.tools.mcp_server) {
    for (const auto& f : m->files) add(f, "tools.agent.mcp_server files");
    if (m->python()) add((fs::path(m->root) / m->script).string(), "tools.agent.mcp_server");
  }
  return out;
}

// The key naming `rel` (or a directory above it) as an input, if any.
const Input* input_at(const std::string& rel, const Inputs& inputs) {
  for (const auto& i : inputs)
    if (under(rel, i.rel)) return &i;
  return nullptr;
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
// directory), on a file of `type` with no withheld component and no task input; else why not. A
// link that lands outside the task directory, or nowhere, is left to the walk, which refuses it.
std::optional<std::string> link_excluded(const std::string& task_dir, const std::string& rel, const std::string& home,
                                         TypeRule type, const Inputs& inputs) {
  std::error_code ec;
  const fs::path link = fs::path(task_dir) / rel;
  if (!fs::is_symlink(link, ec)) return std::nullopt;
  fs::path real = fs::canonical(link, ec);
  if (ec) return std::nullopt;
  fs::path base = fs::canonical(task_dir, ec);
  if (ec) return std::nullopt;
  std::string in = real.lexically_relative(base).string();
  if (in.empty() || in == "." || in.rfind("..", 0) == 0) return std::nullopt;
  const std::string to = "a symlink to '" + in + "'";
  // A link in www/ or mock_web/ onto the rest of the task directory would serve that file under
  // the web part's wider types: only links that stay in their own part count.
  if (!home.empty() && !(in.size() > home.size() && under(in, home))) return to + ", outside " + home + "/";
  if (home.empty() && (under(in, "www") || under(in, "mock_web"))) return to;  // judged by its own part
  for (const auto& part : fs::path(in))
    if (auto rule = withheld_name_rule(part.string())) return to + ": " + *rule;
  if (fs::is_directory(real, ec)) return to + ", a directory";
  if (!type(real.filename().string())) return to + ", not a page or asset type";
  if (const Input* i = input_at(in, inputs)) return to + ", which the task names in " + i->key;
  return std::nullopt;
}

// Why www/ or mock_web/ (`home`) leaves out its entry `rel` (task-directory-relative); nullopt
// when it is copied.
std::optional<std::string> web_skip(const std::string& task_dir, const std::string& rel, EntryKind kind,
                                    const std::string& home, const Inputs& inputs) {
  if (const Input* i = input_at(rel, inputs)) return "the task names it in " + i->key;
  const std::string name = last_name(rel);
  if (auto rule = withheld_name_rule(name)) return *rule;
  if (auto link = link_excluded(task_dir, rel, home, web_type, inputs)) return link;
  if (kind != EntryKind::kDirectory && !web_type(name)) return std::string("it is not a page or asset type");
  return std::nullopt;
}

// Tells `withheld` of a left-out entry of www/ or mock_web/.
void tell(const WithheldVisit& withheld, const std::string& rel, EntryKind kind, const std::string& why) {
  if (!withheld) return;
  withheld({kind == EntryKind::kDirectory ? rel + "/" : rel,
            kind == EntryKind::kDirectory ? why + ", with everything in it" : why});
}

}  // namespace

std::vector<TaskInput> named_inputs(const TaskConfig& t) {
  std::vector<TaskInput> out;
  for (auto& i : task_inputs(t)) out.push_back({std::move(i.rel), std::move(i.key)});
  return out;
}

Status check_web_dir(const ConfinedDir& d, const std::string& part) {
  std::error_code ec;
  const fs::path p = fs::path(d.root()) / part;
  if (!fs::is_symlink(p, ec)) return {};
  if (auto st = d.stat(part); !st && st.error().code == Errc::kForbidden) return st.fail();
  fs::path target = fs::read_symlink(p, ec);
  return fail(Errc::kForbidden, "'" + part + "' is a symlink" + (ec ? "" : " to '" + target.string() + "'") +
                                    "; mock-web copies only a real " + part +
                                    "/ directory, never another part of the task through a link");
}

Status walk_www_pages(const TaskConfig& t, const ConfinedDir& task_dir, const PageVisit& visit,
                      const WithheldVisit& withheld) {
  if (auto st = check_web_dir(task_dir, "www"); !st) return st;
  auto found = task_dir.stat("www");
  if (!found) return found.fail();
  const Inputs inputs = task_inputs(t);
  auto skip = [&](const std::string& rel, EntryKind kind) {
    auto why = web_skip(task_dir.root(), "www/" + rel, kind, "www", inputs);
    if (why) tell(withheld, "www/" + rel, kind, *why);
    return why.has_value();
  };
  return task_dir.walk("www", kTestsLimits, skip, [&](const TreeEntry& e) -> Status {
    return e.kind == EntryKind::kDirectory ? Status() : visit(e);
  });
}

Status walk_task_pages(const TaskConfig& t, const ConfinedDir& task_dir, const PageVisit& visit,
                       const WithheldVisit& withheld) {
  if (auto st = check_web_dir(task_dir, "mock_web"); !st) return st;
  const Inputs inputs = task_inputs(t);
  const bool server_tree = in_server_tree(t);
  auto skip = [&](const std::string& rel, EntryKind kind) {
    if (rel == "www") return true;  // www/ is mock-web's other root
    if (under(rel, "mock_web") && rel != "mock_web") {
      auto why = web_skip(task_dir.root(), rel, kind, "mock_web", inputs);
      if (why) tell(withheld, rel, kind, *why);
      return why.has_value();
    }
    if (input_at(rel, inputs)) return true;
    if (rel == "mock_web") return false;
    if (server_tree) return true;
    return skip_name_or_type(rel, kind, asset_type) || link_excluded(task_dir.root(), rel, "", asset_type, inputs).has_value();
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
