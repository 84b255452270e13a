// Projects (docs/task.md "Projects"): a task whose directory is <root>/tasks/<name> shares the
// files of <root> (data, a wiki, an MCP server, check helpers) with its sibling tasks and reaches
// them with "../../"; nothing beyond <root>, nothing hidden, and never another task's files.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/confined_dir.h"
#include "core/result.h"

namespace forge::manifest {

struct Project {
  std::string root;       // the directory holding tasks/, absolute, symlinks resolved
  std::string task_name;  // <name> of <root>/tasks/<name>
};

// The project the task in `task_dir` belongs to: its directory (symlinks resolved) is
// <root>/tasks/<name>, with <root> not "/". nullopt: a task of its own.
std::optional<Project> project_of(const std::string& task_dir);

// The task's files as forgectl reads every one of them: beneath the task directory, and for a task
// in a project also the project's files through leading ".." components (ConfinedDir::open_within).
Result<ConfinedDir> open_task_files(const std::string& task_dir);

// Whether `rel`, relative to the task directory, leaves it: it starts with "..".
bool leaves_task(std::string_view rel);

// Who receives a file: the agent (system prompt, json_db, filesystem.copy, MCP server files, rag
// corpus), or only the grader and the oracle (the grading file, custom_checks.dir, solution.script).
enum class Reach { kAgent, kGrader };

struct PathProblem {
  std::string message;  // names `rel` as written, never a file's content
  std::string hint;
};

// Why `rel` (which leaves_task) may not be used, before anything is opened: the task is not in a
// project; it climbs above the project's root; it names a hidden file of the project (".env",
// ".git"); for kAgent, it is the project's root or tasks/ directory, lies in another task's
// directory, or is a directory holding a task. nullopt: it may be used (it must still exist, and
// is opened through open_task_files).
std::optional<PathProblem> project_path_problem(const std::string& task_dir, std::string_view rel, Reach reach);

// Where `rel` lands when a task's files are copied into a container keeping the layout they have
// on disk: for a task in a project, relative to the project's root ("mcp_server.py",
// "tasks/<name>/fixtures/x.json"); otherwise `rel` itself.
std::string layout_path(const std::string& task_dir, const std::string& rel);
// The task directory in that layout: "tasks/<name>" for a task in a project, "" otherwise.
std::string layout_task_dir(const std::string& task_dir);

}  // namespace forge::manifest
