// Initial state for a trial.
#include "trial/trial_setup.h"

#include <filesystem>
#include <set>

#include "core/confined_dir.h"
#include "core/json.h"
#include "core/web_files.h"
#include "engine/archive.h"
#include "engine/containers.h"
#include "engine/tar.h"
#include "manifest/project.h"
#include "manifest/task_dir.h"
#include "manifest/task_pages.h"
#include "tools/workspace_path.h"

namespace forge::trial {

std::string db_init_body(const manifest::InitialState& s) {
  json::Writer w;
  w.begin_object().key("tables").begin_object();
  for (const auto& [table, records] : s.tables) {
    w.key(table).begin_array();
    for (const auto& r : records) w.raw_value(r);
    w.end_array();
  }
  // As json-db takes them verbatim: "table.field", or a bare "field" for every table's records.
  w.end_object().field("unstable_fields", s.unstable_fields).end_object();
  return w.take();
}

namespace {

// "task.yaml:12:9: " for an entry of the task, so a refused file is found where it is named.
std::string at(const manifest::SourceLocation& where) {
  if (where.file.empty()) return "";
  return where.file + ":" + std::to_string(where.line) + ":" + std::to_string(where.column) + ": ";
}

}  // namespace

Result<std::vector<InitialFile>> read_initial_files(const manifest::TaskConfig& task, const std::string& workspace) {
  std::vector<InitialFile> out;
  if (task.initial_state.filesystem_copy.empty()) return out;
  // A task in a project may copy the project's shared files ("../../data/x.json").
  auto dir = manifest::open_task_files(task.dir);
  if (!dir) return dir.fail_with("copying the task's files");
  for (const auto& copy : task.initial_state.filesystem_copy) {
    const std::string where = at(copy.where) + "initial_state.filesystem.copy";
    auto rel = tools::workspace_relative(copy.to, workspace);
    if (!rel) return rel.fail_with(where + " to '" + copy.to + "'");
    // Opened beneath the task directory: a link swapped in since the task loaded is refused.
    auto content = dir->read(copy.from, manifest::kTaskFileMax);
    if (!content) return content.fail_with(where + " from '" + copy.from + "'");
    out.push_back({std::move(*rel), copy.to, std::move(*content)});
  }
  return out;
}

Result<std::map<std::string, std::string>> copy_initial_files(engine::Client& c, const std::string& runner,
                                                              const std::string& workspace, const manifest::TaskConfig& task,
                                                              FileOwner owner) {
  std::map<std::string, std::string> shown;
  auto files = read_initial_files(task, workspace);
  if (!files) return files.fail();
  if (files->empty()) return shown;
  engine::TarWriter tar;
  for (const auto& f : *files) {
    // Owned by the workspace's owner (the agent's uid), so the agent can change what it was given.
    engine::TarEntry e;
    e.path = f.rel;
    e.content = f.content;
    e.uid = owner.uid;
    e.gid = owner.gid;
    if (auto st = tar.add_entry(e); !st) return st.fail();
    shown[f.to] = f.content;
  }
  auto bytes = tar.finish();
  if (!bytes) return bytes.fail();
  if (auto st = engine::put_archive(c, runner, workspace, std::move(*bytes)); !st) return st.fail_with("copying the task's files");
  return shown;
}

namespace {

// Adds each page file under `prefix`, with the directories leading to it (0755, once each):
// mock-web runs as nobody and only reads.
struct PageTar {
  engine::TarWriter tar;
  std::set<std::string> dirs;
  bool any = false;
  Status add(const std::string& prefix, const TreeEntry& e) {
    std::string path = prefix.empty() ? e.rel : prefix + "/" + e.rel;
    for (auto slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1))
      if (dirs.insert(path.substr(0, slash)).second)
        if (auto st = tar.add_directory(path.substr(0, slash), 0755); !st) return st;
    engine::TarEntry meta;
    meta.path = path;
    meta.mode = 0644;
    any = true;
    return tar.add_fd(meta, e.fd);
  }
  Result<std::optional<std::string>> finish() {
    if (!any) return std::optional<std::string>();
    auto bytes = tar.finish();
    if (!bytes) return bytes.fail();
    return std::optional<std::string>(std::move(*bytes));
  }
};

}  // namespace

Result<std::optional<std::string>> www_tar(const manifest::TaskConfig& task) {
  const std::string what = "copying " + task.dir + "/www";
  auto dir = ConfinedDir::open(task.dir);
  if (!dir) return dir.fail_with(what);
  auto found = dir->stat("www");
  if (!found && found.error().code == Errc::kNotFound) return std::optional<std::string>();
  if (!found) return found.fail_with(what);
  PageTar out;
  auto st = manifest::walk_www_pages(task, *dir, [&](const TreeEntry& e) { return out.add("", e); });
  if (!st) return st.fail_with(what);
  return out.finish();
}

Result<std::optional<std::string>> task_pages_tar(const manifest::TaskConfig& task) {
  if (!manifest::has_task_pages_route(task)) return std::optional<std::string>();
  const std::string what = "copying the pages of " + task.dir;
  auto dir = ConfinedDir::open(task.dir);
  if (!dir) return dir.fail_with(what);
  PageTar out;
  const std::string prefix = "task/" + task.category + "/" + task.task_id;
  auto st = manifest::walk_task_pages(task, *dir, [&](const TreeEntry& e) { return out.add(prefix, e); });
  if (!st) return st.fail_with(what);
  return out.finish();
}

namespace {

// The pack-shared files of Tolokaforge's layout around a task at <pack>/<category>/<task_id>/.
constexpr TreeLimits kSharedLimits{2000, 64u << 20, 8};
const char* const kAppDataFiles[] = {"places",       "menus",         "hours",       "reviews", "reservations",
                                     "grocery_items", "coffee_menu", "events", "notes"};

// <pack>/<category>/_assets/: static assets only, no withheld name at any depth.
Status add_assets(PageTar& out, const std::string& dir, const std::string& prefix) {
  auto d = ConfinedDir::open(dir, "the pack's shared _assets");
  if (!d) return d.fail();
  auto skip = [](const std::string& rel, EntryKind kind) {
    const std::string name = rel.substr(rel.rfind('/') + 1);
    return is_withheld_name(name) || (kind != EntryKind::kDirectory && !is_page_asset_type(name));
  };
  return d->walk("", kSharedLimits, skip, [&](const TreeEntry& e) {
    return e.kind == EntryKind::kFile ? out.add(prefix, e) : Status();
  });
}

// <pack>/mobile/_data/<dataset>/<name>.json: /api/app-data's nine files, nothing else.
Status add_app_data(PageTar& out, const std::string& dir, const std::string& prefix) {
  auto d = ConfinedDir::open(dir, "the pack's mobile/_data");
  if (!d) return d.fail();
  auto wanted = [](const std::string& rel, EntryKind kind) {
    auto slash = rel.find('/');
    if (slash == std::string::npos) return kind == EntryKind::kDirectory && !is_withheld_name(rel);
    const std::string name = rel.substr(slash + 1);
    for (const char* f : kAppDataFiles)
      if (name == std::string(f) + ".json") return kind == EntryKind::kFile;
    return false;
  };
  return d->walk("", kSharedLimits, [&](const std::string& rel, EntryKind k) { return !wanted(rel, k); },
                 [&](const TreeEntry& e) { return e.kind == EntryKind::kFile ? out.add(prefix, e) : Status(); });
}

}  // namespace

Result<std::optional<std::string>> pack_shared_tar(const manifest::TaskConfig& task) {
  if (!manifest::has_task_pages_route(task)) return std::optional<std::string>();
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::absolute(task.dir, ec).lexically_normal();
  std::filesystem::path category = dir.parent_path();
  if (ec || category.filename() != task.category) return std::optional<std::string>();
  PageTar out;
  const std::filesystem::path assets = category / "_assets", data = category.parent_path() / "mobile" / "_data";
  if (std::filesystem::is_directory(assets, ec))
    if (auto st = add_assets(out, assets.string(), "task/" + task.category + "/_assets"); !st)
      return st.fail_with("copying " + assets.string());
  if (std::filesystem::is_directory(data, ec))
    if (auto st = add_app_data(out, data.string(), "task/mobile/_data"); !st)
      return st.fail_with("copying " + data.string());
  return out.finish();
}

Status copy_www(engine::Client& c, const std::string& mock_web, const manifest::TaskConfig& task) {
  auto tar = www_tar(task);
  if (!tar) return tar.fail();
  if (!*tar) return {};
  return engine::put_archive(c, mock_web, "/srv/www", std::move(**tar));
}

Status copy_mock_web(engine::Client& c, const std::string& mock_web, const manifest::TaskConfig& task) {
  if (auto st = copy_www(c, mock_web, task); !st) return st;
  auto tar = task_pages_tar(task);
  if (!tar) return tar.fail();
  if (!*tar) return {};
  // Into /srv, which every image with /srv/www has: the archive makes task/<category>/<task_id>/.
  if (auto st = engine::put_archive(c, mock_web, "/srv", std::move(**tar)); !st) return st;
  auto shared = pack_shared_tar(task);
  if (!shared) return shared.fail();
  if (!*shared) return {};
  return engine::put_archive(c, mock_web, "/srv", std::move(**shared));
}

Result<std::string> service_url(engine::Client& c, const std::string& container, int port) {
  auto info = engine::inspect_container(c, container);
  if (!info) return info.fail();
  for (const auto& [name, ep] : info->networks)
    if (!ep.ip_address.empty()) return "http://" + ep.ip_address + ":" + std::to_string(port);
  return fail(Errc::kNotFound, "container " + container.substr(0, 12) + " has no network address");
}

}  // namespace forge::trial
