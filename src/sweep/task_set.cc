// Finding, loading and checking a run's tasks.
#include "sweep/task_set.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "manifest/harbor/dataset_manifest.h"
#include "manifest/harbor/harbor_load.h"
#include "manifest/task_kind.h"
#include "manifest/task_parse.h"
#include "trial/json_db_use.h"
#include "trial/local_trial.h"
#include "trial/mock_web_use.h"
#include "trial/rag_use.h"

namespace forge::sweep {

namespace fs = std::filesystem;

namespace {

trial::Problem warning_of(const manifest::Diagnostic& d) {
  std::string where = d.file;
  if (d.line > 0) where += ":" + std::to_string(d.line) + (d.column > 0 ? ":" + std::to_string(d.column) : "");
  return {where, d.message + (d.hint.empty() ? "" : " (hint: " + d.hint + ")"), trial::Severity::kWarning};
}

// A task that failed to load: one problem per line of its report, a warning's line as a warning.
std::vector<trial::Problem> load_problems(const Error& e) {
  constexpr std::string_view kMark = ": warning: ";
  std::vector<trial::Problem> out;
  if (e.code != Errc::kInvalid || !e.context.empty()) return {{"", e.what()}};
  std::size_t start = 0;
  const std::string& text = e.message;
  while (start < text.size()) {
    std::size_t end = std::min(text.find('\n', start), text.size());
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    if (auto mark = line.find(kMark); mark != std::string::npos)
      out.push_back({line.substr(0, mark), line.substr(mark + kMark.size()), trial::Severity::kWarning});
    else
      out.push_back({"", line});
  }
  if (out.empty()) out.push_back({"", e.what()});
  return out;
}

// The file that stands for the task in `dir`, which holds a task.toml: task.toml for a Harbor
// task, task.yaml for a Terminal-Bench 1 task beside a stray task.toml. A directory that cannot be
// told apart keeps task.toml, whose loader then says what is wrong.
std::string standing_file(const fs::path& dir) {
  auto kind = manifest::detect_task_kind(dir.string());
  return kind ? manifest::config_file_of(*kind) : "task.toml";
}

}  // namespace

namespace {

// A Harbor dataset with its dataset.toml: the manifest's tasks, no others (docs/harbor.md).
Result<std::vector<std::string>> manifest_tasks(const std::string& dataset, std::vector<std::string>* notes) {
  auto chosen = manifest::select_dataset_tasks(dataset);
  if (!chosen) return chosen.fail();
  if (chosen->unlisted > 0 && notes)
    notes->push_back(std::to_string(chosen->unlisted) + " task director" + (chosen->unlisted == 1 ? "y" : "ies") +
                     " in '" + dataset + "' not named in its " + manifest::kDatasetManifestFile +
                     " will not run");
  std::vector<std::string> out;
  for (const auto& dir : chosen->task_dirs)
    out.push_back(fs::absolute(fs::path(dir) / standing_file(dir)).lexically_normal().string());
  return out;
}

}  // namespace

Result<std::vector<std::string>> discover_tasks(const std::vector<std::string>& paths, const std::string& glob,
                                                std::vector<std::string>* notes) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec) && !fs::exists(fs::path(p) / "task.toml") && manifest::has_dataset_manifest(p)) {
      // "ds/." and "ds/" are named "ds" in messages.
      std::string dataset = fs::path(p).lexically_normal().string();
      if (dataset.size() > 1 && dataset.back() == '/') dataset.pop_back();
      auto listed = manifest_tasks(dataset, notes);
      if (!listed) return listed.fail();
      out.insert(out.end(), listed->begin(), listed->end());
    } else if (fs::is_regular_file(p, ec)) {
      out.push_back(fs::absolute(p).lexically_normal().string());
    } else if (fs::is_directory(p, ec) && fs::exists(fs::path(p) / "task.toml")) {
      // A Harbor task (Harbor reads only task.toml, so it wins over a task.yaml beside it), or a
      // Terminal-Bench 1 task with a stray task.toml (manifest/task_kind.h).
      out.push_back(fs::absolute(fs::path(p) / standing_file(p)).lexically_normal().string());
    } else if (fs::is_directory(p, ec) && fs::exists(fs::path(p) / "task.yaml")) {
      out.push_back(fs::absolute(fs::path(p) / "task.yaml").lexically_normal().string());
    } else if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      // A project's tasks live under tasks/; the rest of it is shared files (and perhaps old runs'
      // outputs, whose task.yaml copies are no tasks).
      const fs::path project_tasks = fs::path(p) / "tasks";
      const fs::path under = fs::is_directory(project_tasks, ec) ? project_tasks : fs::path(p);
      for (auto it = fs::recursive_directory_iterator(under, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const auto name = it->path().filename();
        if (!it->is_regular_file() || (name != "task.yaml" && name != "task.toml")) continue;
        // Of a task.yaml and a task.toml side by side, one stands for the task.
        const fs::path parent = it->path().parent_path();
        if (fs::exists(parent / "task.toml", ec) && name != standing_file(parent)) continue;
        std::string rel = fs::relative(it->path(), p).generic_string();
        // "**/task.yaml" also matches a task.yaml at the top, as a shell's globstar does, and
        // stands for Harbor's task.toml too (a dataset may mix the formats).
        if (::fnmatch(glob.c_str(), rel.c_str(), FNM_PATHNAME) == 0 || glob == "**/task.yaml")
          found.push_back(fs::absolute(it->path()).lexically_normal().string());
      }
      if (found.empty()) return fail(Errc::kInvalid, "no task.yaml under '" + p + "' (tasks_glob " + glob + ")");
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else {
      return fail(Errc::kInvalid, "'" + p + "' is not a task directory, a task.yaml, or a directory of tasks");
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool has_errors(const std::vector<trial::Problem>& problems) {
  return std::any_of(problems.begin(), problems.end(),
                     [](const trial::Problem& p) { return p.severity == trial::Severity::kError; });
}

namespace {

// A Tolokaforge task.yaml, or a Harbor / Terminal-Bench 1 task (harbor_load.h), by what its
// directory holds.
Result<manifest::TaskConfig> load_any_task(const std::string& path) {
  const std::string dir = fs::path(path).parent_path().string();
  auto kind = manifest::detect_task_kind(dir);
  if (kind && (*kind == manifest::TaskKind::kHarbor || *kind == manifest::TaskKind::kTerminalBench1))
    return manifest::load_harbor_task_config(dir);
  return manifest::load_task(path);
}

}  // namespace

bool TaskSet::ok() const {
  if (has_errors(run_problems)) return false;
  for (const auto& [path, problems] : per_task)
    if (has_errors(problems)) return false;
  return true;
}

std::vector<trial::Problem> TaskSet::warnings() const {
  std::vector<trial::Problem> out;
  for (const auto& p : run_problems)
    if (p.severity == trial::Severity::kWarning) out.push_back(p);
  for (const auto& [path, problems] : per_task)
    for (const auto& p : problems)
      if (p.severity == trial::Severity::kWarning) out.push_back(p);
  return out;
}

std::string TaskSet::report() const {
  std::string out;
  for (const auto& p : run_problems) out += p.text() + "\n";
  for (const auto& [path, problems] : per_task)
    for (const auto& p : problems) out += p.text() + "\n";
  if (!out.empty()) out.pop_back();
  return out;
}

TaskSet load_task_set(const std::vector<std::string>& paths, const std::string& glob, const trial::PreflightInput& in) {
  TaskSet set;
  std::vector<std::string> notes;
  auto found = discover_tasks(paths, glob, &notes);
  if (!found) {
    set.run_problems.push_back({"", found.error().what()});
    return set;
  }
  for (auto& n : notes) set.run_problems.push_back({"", std::move(n), trial::Severity::kWarning});
  for (const auto& path : *found) {
    auto t = load_any_task(path);
    if (!t) {
      set.per_task.push_back({path, load_problems(t.error())});
      continue;
    }
    if (in.executor == manifest::ExecutorKind::kLocal) t->environment.tools.executor = manifest::ExecutorKind::kLocal;
    auto problems = trial::check_task(*t, in);
    for (const auto& w : t->warnings) problems.push_back(warning_of(w));
    // What the task does not use, its trials do not start (docs/stacks.md, "Only what a task needs").
    if (!has_errors(problems) && !trial::runs_locally(*t)) {
      trial::drop_unused_json_db(*t);
      // initial_state.mock_web on the core stack: its mock-web, before keying and image resolution.
      if (auto added = trial::add_mock_web(*t); !added) problems.push_back({t->path, added.error().what()});
      // initial_state.rag on the core stack: its rag service, likewise.
      if (auto added = trial::add_rag(*t); !added) problems.push_back({t->path, added.error().what()});
    }
    set.per_task.push_back({path, std::move(problems)});
    set.tasks.push_back(std::move(*t));
  }
  std::map<std::string, std::string> seen;
  for (const auto& t : set.tasks)
    if (auto [it, fresh] = seen.emplace(t.task_id, t.path); !fresh)
      set.run_problems.push_back({t.path, "task_id '" + t.task_id + "' is also the id of " + it->second});
  std::vector<const manifest::TaskConfig*> ptrs;
  for (const auto& t : set.tasks) ptrs.push_back(&t);
  for (auto& p : trial::check_models(ptrs, in)) set.run_problems.push_back(std::move(p));
  return set;
}

}  // namespace forge::sweep
