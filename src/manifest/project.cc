// Projects: which tasks are in one, how their files are opened, and what "../" may reach.
#include "manifest/project.h"

#include <filesystem>
#include <vector>

#include "manifest/task_dir.h"

namespace forge::manifest {

namespace fs = std::filesystem;

namespace {

std::string q(std::string_view s) { return "'" + std::string(s) + "'"; }

// `rel`'s components without empty ones and ".".
std::vector<std::string> parts_of(std::string_view rel) {
  std::vector<std::string> out;
  for (std::size_t pos = 0; pos <= rel.size();) {
    std::size_t end = std::min(rel.find('/', pos), rel.size());
    std::string_view part = rel.substr(pos, end - pos);
    if (!part.empty() && part != ".") out.emplace_back(part);
    pos = end + 1;
  }
  return out;
}

// The first task.yaml under directory `rel` (relative to the task), or "".
std::string task_inside(const std::string& task_dir, std::string_view rel) {
  auto d = open_task_files(task_dir);
  if (!d) return "";
  auto st = d->stat(rel);
  if (!st || st->kind != EntryKind::kDirectory) return "";
  std::string found;
  // Other problems of the tree (links, limits) are reported by the check of the key itself.
  (void)d->walk(rel, kTestsLimits, [&](const TreeEntry& e) -> Status {
    if (e.kind != EntryKind::kFile || fs::path(e.rel).filename() != "task.yaml") return {};
    found = e.rel;
    return fail(Errc::kConflict, "found");
  });
  return found;
}

}  // namespace

std::optional<Project> project_of(const std::string& task_dir) {
  std::error_code ec;
  fs::path dir = fs::weakly_canonical(fs::absolute(task_dir, ec), ec);
  if (ec) return std::nullopt;
  if (dir.filename().empty()) dir = dir.parent_path();  // "…/t1/" keeps its separator
  const fs::path tasks = dir.parent_path();
  if (tasks.filename() != "tasks") return std::nullopt;
  const fs::path root = tasks.parent_path();
  // The file system's root is no project: "../../" would reach /etc.
  if (root.empty() || root == root.root_path()) return std::nullopt;
  return Project{root.string(), dir.filename().string()};
}

Result<ConfinedDir> open_task_files(const std::string& task_dir) {
  if (auto p = project_of(task_dir)) return ConfinedDir::open_within(p->root, task_dir);
  return ConfinedDir::open(task_dir);
}

bool leaves_task(std::string_view rel) { return rel == ".." || rel.substr(0, 3) == "../"; }

std::optional<PathProblem> project_path_problem(const std::string& task_dir, std::string_view rel, Reach reach) {
  auto p = project_of(task_dir);
  if (!p)
    return PathProblem{q(rel) + " is outside the task directory",
                       "only a task in a project (<root>/tasks/<name>/task.yaml) reaches files beside its directory; "
                       "copy what it needs into the task"};
  std::vector<std::string> parts = parts_of(rel);
  std::size_t ups = 0;
  while (ups < parts.size() && parts[ups] == "..") ++ups;
  for (std::size_t i = ups; i < parts.size(); ++i) {
    if (parts[i] == "..")
      return PathProblem{q(rel) + ": '..' may only lead the path", "write it plainly, e.g. ../../data/db.json"};
  }
  if (ups > 2)
    return PathProblem{q(rel) + " is outside the project " + q(p->root),
                       "a task in a project reaches the project's own files, nothing above its root"};
  for (std::size_t i = ups; i < parts.size(); ++i)
    if (parts[i].front() == '.')
      return PathProblem{q(rel) + " names a hidden file of the project (" + q(parts[i]) + ")",
                         "a project's hidden files and directories (.env, .git, …) are never reachable from a task"};
  if (reach == Reach::kGrader) return std::nullopt;

  // Where it leads, relative to the project's root.
  std::vector<std::string> at = {"tasks", p->task_name};
  at.resize(2 - ups);
  at.insert(at.end(), parts.begin() + static_cast<std::ptrdiff_t>(ups), parts.end());
  if (at.empty() || (at.size() == 1 && at[0] == "tasks"))
    return PathProblem{q(rel) + " is the project's " + std::string(at.empty() ? "root" : "tasks/ directory") +
                           ", which holds every task and its grading files",
                       "name the shared files or directories themselves"};
  if (at[0] == "tasks" && at[1] != p->task_name &&
      fs::exists(fs::path(p->root) / "tasks" / at[1] / "task.yaml"))
    return PathProblem{q(rel) + " is in another task's directory ('tasks/" + at[1] + "')",
                       "a task never reaches another task's files, its grading files among them; keep shared files "
                       "outside tasks/"};
  if (std::string inner = task_inside(task_dir, rel); !inner.empty())
    return PathProblem{q(rel) + " holds a task (" + q(inner) + "), and with it that task's grading files",
                       "name a directory of shared files only"};
  return std::nullopt;
}

std::string layout_path(const std::string& task_dir, const std::string& rel) {
  auto p = project_of(task_dir);
  if (!p) return rel;
  return (fs::path("tasks") / p->task_name / rel).lexically_normal().generic_string();
}

std::string layout_task_dir(const std::string& task_dir) {
  auto p = project_of(task_dir);
  return p ? "tasks/" + p->task_name : "";
}

}  // namespace forge::manifest
