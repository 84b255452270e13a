// What kind of task a directory holds, and the task directories of a dataset, so that Tolokaforge,
// Harbor and Terminal-Bench 1 tasks can be mixed in one sweep.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/result.h"

namespace forge::manifest {

enum class TaskKind {
  kNone,            // no task file forgectl knows
  kTolokaforge,     // task.yaml with a top-level task_id (load_task)
  kHarbor,          // task.toml (load_harbor_task); Harbor reads only task.toml, so it wins over a task.yaml,
                    // unless that is Terminal-Bench 1's with run-tests.sh and Harbor's instruction.md
                    // and tests/test.sh are both absent (Tolokaforge's Terminal-Bench layout)
  kTerminalBench1,  // task.yaml with a top-level instruction (load_tb1_task)
};
const char* to_string(TaskKind k);  // "none", "tolokaforge", "harbor", "terminal-bench-1"

// Looks at `dir`'s file names and, for a task.yaml, its top-level keys only (the file is at most
// kMaxConfigBytes). kNotFound when `dir` is not a directory; kInvalid when a task.yaml cannot be
// read as YAML, or has both task_id and instruction.
Result<TaskKind> detect_task_kind(const std::string& dir);

// The file that stands for a task of kind `k`: task.toml for Harbor's, task.yaml for the others.
const char* config_file_of(TaskKind k);

inline constexpr std::size_t kMaxDatasetTasks = 10000;

// The task directories directly under `dataset` (the paths as `dataset`/name), sorted by name;
// entries that hold no task (README.md, .git, a dataset.toml) are skipped, as are hidden ones. A
// symlinked entry is followed only when it stays inside `dataset`, else it is an error, as are
// more than `max_tasks` tasks and a task.yaml that cannot be read.
Result<std::vector<std::string>> list_dataset(const std::string& dataset, std::size_t max_tasks = kMaxDatasetTasks);

}  // namespace forge::manifest
