// A Harbor dataset's manifest (dataset.toml, as `harbor download` and `harbor dataset init` write
// it): which task directories of a dataset run, and the content digest each must have.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "manifest/task_kind.h"

namespace forge::manifest {

inline constexpr const char* kDatasetManifestFile = "dataset.toml";
// Bounds on one task's digest: what a task directory may hold before hashing it is refused.
inline constexpr std::size_t kMaxDigestFiles = 20000;
inline constexpr std::uintmax_t kMaxDigestBytes = std::uintmax_t{4} << 30;  // 4 GiB

struct DatasetTaskRef {
  std::string name;    // "org/name", as the manifest writes it
  std::string dir;     // the task directory looked for: <dataset>/<name without its org>
  std::string digest;  // "sha256:<64 hex>", or "" when the entry gives none
  int line = 0;        // of the entry in dataset.toml
};

struct DatasetManifest {
  std::string file;  // <dataset>/dataset.toml
  std::string name, version;
  std::vector<DatasetTaskRef> tasks;  // in the manifest's order
};

// True when `dataset` is a directory holding a dataset.toml.
bool has_dataset_manifest(const std::string& dataset);

// Reads <dataset>/dataset.toml. kInvalid naming file:line and key for bad TOML, wrong types,
// a name that is not "org/name", a malformed digest, two entries for one task directory, no
// [[tasks]] at all, or more than `max_tasks` of them.
Result<DatasetManifest> read_dataset_manifest(const std::string& dataset, std::size_t max_tasks = kMaxDatasetTasks);

// Harbor's content digest of a task directory, "sha256:<hex>": SHA-256 over the lines
// "<relative path>\0<file's SHA-256 hex>\n", sorted by path, of task.toml, instruction.md,
// README.md and trajectory.json and every file under environment/, tests/, solution/ and steps/,
// leaving out __pycache__, .DS_Store, *.pyc, *.swp, *.swo and *~. A directory symlink, a symlink
// leading outside the task, and more than kMaxDigestFiles files or kMaxDigestBytes are errors.
Result<std::string> harbor_task_digest(const std::string& task_dir);

struct DatasetSelection {
  std::vector<std::string> task_dirs;  // the manifest's tasks, in its order
  std::size_t unlisted = 0;            // task directories on disk the manifest does not name
};

// The tasks a dataset with a dataset.toml runs: every listed task must be a task directory on
// disk (else kNotFound naming the task and the path looked for) and match its digest when the
// manifest gives one (else kInvalid naming the task, the expected and the actual digest).
Result<DatasetSelection> select_dataset_tasks(const std::string& dataset, std::size_t max_tasks = kMaxDatasetTasks);

}  // namespace forge::manifest
