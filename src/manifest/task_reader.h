// Readers for the blocks of a task.yaml, shared by task_parse.cc and its neighbours. Internal to
// src/manifest (names yaml-cpp through yaml_reader.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "manifest/project.h"
#include "manifest/task_config.h"
#include "manifest/task_dir.h"
#include "manifest/yaml_reader.h"

namespace forge::manifest {

enum class PathKind { kFile, kDirectory };

// `rel`, a path the task gives relative to its directory `dir`, as an absolute path. Absolute
// paths, paths that leave `dir` (symlinks resolved) and missing ones are diagnostics at `f`; a
// task in a project may reach the project's files with leading "..", as project_path_problem
// allows for `reach`.
std::optional<std::string> task_path(YamlReader& r, const Field& f, const std::string& what, const std::string& dir,
                                     const std::string& rel, PathKind kind, Reach reach);

// What the files at `path` (a file, or every regular file below a directory, symlinks not
// followed) add up to; the walk stops once a limit of core/limits.h is passed.
struct FileUsage {
  std::uintmax_t bytes = 0;
  std::size_t files = 0;
  std::string largest;  // the largest file seen, for messages
  std::uintmax_t largest_bytes = 0;
};
FileUsage file_usage(const std::string& path);

// A diagnostic at the task's root when the files it names (its YAML, fixtures, prompt, copies,
// solution, compose file, checks and tests) add up to more than limits::kMaxTaskBytes.
void check_task_size(YamlReader& r, const Field& root, const TaskConfig& task);
// The text of task file `rel` (of at most `max_bytes`, for `reach`), read beneath `dir`; problems at `f`.
std::optional<std::string> read_task_file(YamlReader& r, const Field& f, const std::string& what,
                                          const std::string& dir, const std::string& rel, std::size_t max_bytes,
                                          Reach reach);
// Checks the tree under directory `rel` as forgectl will copy it: no link out of `dir`, no link
// to a directory, nothing but files and directories, within `limits`. Problems at `f`.
bool check_task_tree(YamlReader& r, const Field& f, const std::string& what, const std::string& dir,
                     const std::string& rel, const TreeLimits& limits);

// Task files that must never reach the runner while the agent works: grading.yaml, tests/,
// solution* (for a project's file reached with "../", its path below the project's root counts).
// Tolokaforge bundled grading.yaml into the agent's container (reference §10.2).
bool is_grading_asset(const std::string& rel);

InitialState read_initial_state(YamlReader& r, const Field& block, const std::string& dir);
UserSimulatorConfig read_user_simulator(YamlReader& r, const Field& block);
Solution read_solution(YamlReader& r, const Field& block, const std::string& dir);

// metadata and policies fill fields of the task itself.
void read_metadata(YamlReader& r, const Field& block, TaskConfig& task);
// Returns policies.agent_system_prompt, when given.
std::optional<std::string> read_policies(YamlReader& r, const Field& block, TaskConfig& task);

// The system prompt (docs/task.md "System prompt"): policies.agent_system_prompt, else the
// `system_prompt` file or "__adapter__" text, else the fallback with Guidance bullets.
// `system_prompt` is the field when the task has one.
void resolve_system_prompt(YamlReader& r, const std::optional<Field>& system_prompt,
                           const std::optional<std::string>& policy_prompt, TaskConfig& task);

}  // namespace forge::manifest
