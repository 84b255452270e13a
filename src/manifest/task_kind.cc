// Telling Tolokaforge, Harbor and Terminal-Bench 1 tasks apart, and listing a dataset's tasks.
#include "manifest/task_kind.h"

#include <algorithm>
#include <filesystem>

#include "manifest/files.h"
#include "manifest/harbor/harbor_task.h"
#include "manifest/yaml_reader.h"

namespace forge::manifest {

namespace fs = std::filesystem;

const char* to_string(TaskKind k) {
  switch (k) {
    case TaskKind::kNone:
      return "none";
    case TaskKind::kTolokaforge:
      return "tolokaforge";
    case TaskKind::kHarbor:
      return "harbor";
    case TaskKind::kTerminalBench1:
      return "terminal-bench-1";
  }
  return "none";
}

namespace {

bool is_file(const std::string& dir, const char* name) { return file_kind(join_path(dir, name)) == FileKind::kFile; }

// Tolokaforge's Terminal-Bench layout keeps a task.toml beside Terminal-Bench 1's files. Such a
// directory is Terminal-Bench 1's when its task.yaml and run-tests.sh are there and neither of
// Harbor's own files is: a Harbor task without instruction.md or tests/test.sh could not run.
bool tb1_files_without_harbor_files(const std::string& dir) {
  return is_file(dir, "task.yaml") && is_file(dir, "run-tests.sh") && !is_file(dir, "instruction.md") &&
         !is_file(dir, "tests/test.sh");
}

}  // namespace

Result<TaskKind> detect_task_kind(const std::string& dir) {
  if (file_kind(dir) != FileKind::kDirectory) return fail(Errc::kNotFound, "'" + dir + "' is not a directory");
  const bool toml = is_file(dir, "task.toml");
  if (toml && !tb1_files_without_harbor_files(dir)) return TaskKind::kHarbor;
  const std::string yaml = join_path(dir, "task.yaml");
  if (file_kind(yaml) != FileKind::kFile) return TaskKind::kNone;
  std::error_code ec;
  if (fs::file_size(yaml, ec) > kMaxConfigBytes || ec)
    return fail(Errc::kInvalid, "'" + yaml + "' is larger than " + std::to_string(kMaxConfigBytes >> 20) + " MiB");
  auto text = read_text(yaml);
  if (!text) return fail(text.error());
  Diagnostics diags;
  YamlReader r(yaml, diags);
  auto root = r.parse(*text);
  if (!root) return fail(diags.to_error());
  bool task_id = false, instruction = false;
  if (root->node.IsMap()) {
    for (const auto& kv : root->node) {
      if (!kv.first.IsScalar()) continue;
      task_id = task_id || kv.first.Scalar() == "task_id";
      instruction = instruction || kv.first.Scalar() == "instruction";
    }
  }
  // Beside a task.toml, only a Terminal-Bench 1 task.yaml takes the directory from Harbor.
  if (toml) return instruction && !task_id ? TaskKind::kTerminalBench1 : TaskKind::kHarbor;
  if (task_id && instruction)
    return fail(Errc::kInvalid, "'" + yaml + "' has both task_id (Tolokaforge) and instruction (Terminal-Bench 1)");
  if (task_id) return TaskKind::kTolokaforge;
  if (instruction) return TaskKind::kTerminalBench1;
  return TaskKind::kNone;
}

const char* config_file_of(TaskKind k) { return k == TaskKind::kHarbor ? "task.toml" : "task.yaml"; }

Result<std::vector<std::string>> list_dataset(const std::string& dataset, std::size_t max_tasks) {
  if (file_kind(dataset) != FileKind::kDirectory)
    return fail(Errc::kNotFound, "dataset '" + dataset + "' is not a directory");
  // Names first, so a huge directory of other files is refused before any is opened.
  std::vector<std::string> names;
  std::error_code ec;
  const std::size_t max_entries = max_tasks * 4 + 1000;
  for (fs::directory_iterator it(dataset, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.empty() || name.front() == '.') continue;
    if (names.size() >= max_entries)
      return fail(Errc::kInvalid,
                  "dataset '" + dataset + "' has more than " + std::to_string(max_entries) + " entries");
    names.push_back(std::move(name));
  }
  if (ec) return fail(Errc::kIo, "cannot list dataset '" + dataset + "': " + ec.message());
  std::sort(names.begin(), names.end());

  std::vector<std::string> tasks;
  for (const auto& name : names) {
    const std::string path = join_path(dataset, name);
    auto link = fs::symlink_status(path, ec);
    if (ec) return fail(Errc::kIo, "cannot read '" + path + "': " + ec.message());
    if (fs::is_symlink(link) && !is_inside(path, dataset))
      return fail(Errc::kInvalid, "'" + path + "' is a symlink that leads outside the dataset '" + dataset + "'");
    if (file_kind(path) != FileKind::kDirectory) continue;
    auto kind = detect_task_kind(path);
    if (!kind) return kind.fail_with("listing dataset '" + dataset + "'");
    if (*kind == TaskKind::kNone) continue;
    if (tasks.size() >= max_tasks)
      return fail(Errc::kInvalid, "dataset '" + dataset + "' has more than " + std::to_string(max_tasks) + " tasks");
    tasks.push_back(path);
  }
  return tasks;
}

}  // namespace forge::manifest
