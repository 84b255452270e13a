// Tolokaforge's Python pieces of a task (its tool server script, its checks.py and their helper
// directories): which directory tree holds them, and what of it is copied beside a tool server.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace forge::manifest {

// The image Tolokaforge's Python runs in (stack/python_image.h builds it): a task with a Python
// tool server gets it as its runner; its golden replay and its checks.py run in fresh containers
// of it.
inline constexpr const char* kPythonImage = "forgectl/python:local";

// The uid a Python tool server runs as, in the runner and in its golden-replay container: neither
// the agent's (1000) nor the verifier's (2000) nor root, so no process of theirs can signal it,
// ptrace it or read its memory, whatever capabilities it lacks.
inline constexpr unsigned kServerUid = 3000, kServerGid = 3000;
inline constexpr const char* kServerUser = "3000:3000";

// How far above its own directory a task may reach for its Python (`../../mcp_server.py` of a
// project's tasks/<task>/, `../helpers` of relative_imports).
inline constexpr int kMaxParentLevels = 3;

// The directory holding `task_dir` and every one of `paths` (absolute, lexically normal): the task
// directory itself when they all lie in it, else the nearest ancestor that holds them all — at
// most kMaxParentLevels above `task_dir`, else kForbidden naming the path that reaches too far.
Result<std::string> python_root(const std::string& task_dir, const std::vector<std::string>& paths);

// Whether the entry `rel` of a tool server's tree (a path relative to its root; `dir`: a
// directory) stays out of the copy beside the server: grading assets wherever they are
// (grading.yaml/yml, task.yaml/yml/toml with forgectl's solution block, checks.py, tests/,
// solution*), and Python's caches and VCS data (__pycache__/, *.pyc, .git/).
bool server_copy_skips(std::string_view rel, bool dir);

}  // namespace forge::manifest
