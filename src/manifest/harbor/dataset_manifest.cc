// Reading a Harbor dataset.toml and choosing a dataset's tasks by it (docs/harbor.md, "Datasets").
#include "manifest/harbor/dataset_manifest.h"

#include <map>
#include <regex>
#include <set>

#include "manifest/diagnostics.h"
#include "manifest/files.h"
#include "manifest/harbor/toml_reader.h"

namespace forge::manifest {

namespace {

// Harbor's package names: "org/name", each part starting with a letter or digit, no "..".
const std::regex kTaskName("^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$");
const std::regex kDigest("^sha256:[0-9a-f]{64}$");
// 10000 entries of a name and a digest fit in well under this.
constexpr std::uintmax_t kMaxManifestBytes = 4u << 20;

void read_dataset_table(TomlReader& r, const TomlField& f, DatasetManifest& m) {
  for (const auto& e : r.entries(f, "dataset")) {
    if (e.key == "name" || e.key == "version" || e.key == "description") {
      auto v = r.string(e, "dataset");
      if (v && e.key == "name") m.name = *v;
      if (v && e.key == "version") m.version = *v;
    } else if (e.key == "keywords") {
      r.strings(e, "dataset", 1000);
    } else if (e.key == "authors") {
      r.items(e, "dataset", 1000);  // who wrote it has no effect on a run
    } else {
      r.unknown_key(e, "dataset", {"name", "version", "description", "authors", "keywords"});
    }
  }
}

// One [[tasks]] entry; false when it is unusable (the diagnostic is recorded).
bool read_task_ref(TomlReader& r, const TomlField& item, const std::string& dataset, DatasetTaskRef& t) {
  const std::string& where = item.key;  // "tasks[3]"
  bool has_name = false, named = false;
  for (const auto& k : r.entries(item, where)) {
    if (k.key == "name") {
      named = true;
      auto v = r.string(k, where);
      if (!v) continue;
      if (!std::regex_match(*v, kTaskName) || v->find("..") != std::string::npos) {
        r.error(k, "[" + where + "] 'name' must be \"org/name\" (letters, digits, '.', '_', '-'), got '" + *v + "'");
        continue;
      }
      t.name = *v;
      has_name = true;
    } else if (k.key == "digest") {
      auto v = r.string(k, where);
      if (v && !std::regex_match(*v, kDigest))
        r.error(k, "[" + where + "] 'digest' must be \"sha256:\" and 64 lower-case hex digits, got '" + *v + "'");
      else if (v)
        t.digest = *v;
    } else {
      r.unknown_key(k, where, {"name", "digest"});
    }
  }
  if (!named) r.error(item, "[" + where + "] needs a 'name'");
  if (!has_name) return false;
  t.line = item.line;
  // A downloaded task is the directory named by the part after the org, as Harbor writes it.
  t.dir = join_path(dataset, t.name.substr(t.name.find('/') + 1));
  return true;
}

}  // namespace

bool has_dataset_manifest(const std::string& dataset) {
  return file_kind(dataset) == FileKind::kDirectory &&
         file_kind(join_path(dataset, kDatasetManifestFile)) != FileKind::kMissing;
}

Result<DatasetManifest> read_dataset_manifest(const std::string& dataset, std::size_t max_tasks) {
  DatasetManifest m;
  m.file = join_path(dataset, kDatasetManifestFile);
  if (file_kind(m.file) != FileKind::kFile) return fail(Errc::kInvalid, "'" + m.file + "' is not a file");
  auto text = read_text(m.file, kMaxManifestBytes);
  if (!text) return fail(text.error());
  Diagnostics diags;
  TomlReader r(m.file, diags);
  auto doc = r.parse(*text);
  if (!doc) return fail(diags.to_error(m.file));
  const TomlField root = r.root(*doc);
  bool has_tasks = false;
  std::map<std::string, std::string> dirs;  // task directory → the name that chose it
  for (const auto& e : r.entries(root, "")) {
    if (e.key == "schema_version") {
      r.string(e, "");
    } else if (e.key == "dataset") {
      read_dataset_table(r, e, m);
    } else if (e.key == "files") {
      r.items(e, "", 1000);  // dataset-level files (a metric script): forgectl runs none of them
    } else if (e.key == "tasks") {
      has_tasks = true;
      for (const auto& item : r.items(e, "", max_tasks)) {
        DatasetTaskRef t;
        if (!read_task_ref(r, item, dataset, t)) continue;
        if (auto [it, fresh] = dirs.emplace(t.dir, t.name); !fresh) {
          r.error(item, "[" + item.key + "] task '" + t.name + "' names the directory '" + t.dir +
                            "' that task '" + it->second + "' names too");
          continue;
        }
        m.tasks.push_back(std::move(t));
      }
    } else {
      r.unknown_key(e, "", {"schema_version", "dataset", "tasks", "files"});
    }
  }
  if (!has_tasks) r.error(root, "has no [[tasks]]: a dataset manifest names the tasks that run");
  if (diags.has_errors()) return fail(diags.to_error(m.file));
  return m;
}

Result<DatasetSelection> select_dataset_tasks(const std::string& dataset, std::size_t max_tasks) {
  auto m = read_dataset_manifest(dataset, max_tasks);
  if (!m) return m.fail();
  DatasetSelection s;
  for (const auto& t : m->tasks) {
    // The same confinement as a listed dataset: a symlinked task stays inside the dataset.
    if (file_kind(t.dir) != FileKind::kMissing && !is_inside(t.dir, dataset))
      return fail(Errc::kInvalid, m->file + ":" + std::to_string(t.line) + ": task '" + t.name + "': '" + t.dir +
                                      "' leads outside the dataset '" + dataset + "'");
    auto kind = detect_task_kind(t.dir);
    if (!kind && kind.error().code != Errc::kNotFound) return kind.fail_with("task '" + t.name + "' in " + m->file);
    if (!kind || *kind == TaskKind::kNone)
      return fail(Errc::kNotFound, m->file + ":" + std::to_string(t.line) + ": task '" + t.name +
                                       "' is missing: no task directory at '" + t.dir + "'" +
                                       (kind ? " (it holds no task.toml)" : ""));
    if (!t.digest.empty()) {
      auto actual = harbor_task_digest(t.dir);
      if (!actual) return actual.fail_with("task '" + t.name + "' in " + m->file);
      if (*actual != t.digest)
        return fail(Errc::kInvalid, m->file + ":" + std::to_string(t.line) + ": task '" + t.name + "' at '" + t.dir +
                                        "' does not match its digest: expected " + t.digest + ", found " + *actual);
    }
    s.task_dirs.push_back(t.dir);
  }
  // What else the directory holds is counted, so a user sees what the manifest leaves out.
  auto on_disk = list_dataset(dataset, max_tasks);
  if (!on_disk) return on_disk.fail();
  const std::set<std::string> listed(s.task_dirs.begin(), s.task_dirs.end());
  for (const auto& dir : *on_disk) s.unlisted += listed.count(dir) ? 0 : 1;
  return s;
}

}  // namespace forge::manifest
