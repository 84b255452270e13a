// Where built-in tools act: a runner container (through forgectl's helper) or, for trusted tasks,
// a host directory. One interface, so every tool takes the same path whatever the executor.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/result.h"

namespace forge::tools {

struct RunRequest {
  std::vector<std::string> argv;
  std::string cwd;                        // absolute inside the sandbox; empty: the workspace
  std::vector<std::string> env;           // "K=V", added to the sandbox's own
  std::optional<std::string> stdin_data;  // unset: /dev/null
  Millis timeout{30000};                  // the process group is killed at the deadline
  std::size_t output_cap = 1 << 20;       // per stream; the rest is dropped and counted
};

struct RunResult {
  int exit_code = -1;
  std::string out, err;
  std::uint64_t out_dropped = 0, err_dropped = 0;  // bytes beyond the cap
  bool timed_out = false;
  Millis elapsed{0};
};

enum class EntryKind { kFile, kDirectory, kSymlink, kOther };

struct DirEntry {
  std::string name;
  EntryKind kind = EntryKind::kFile;
  std::int64_t size = 0;
  unsigned mode = 0;
};

struct FileChunk {
  std::string data;
  std::int64_t size = 0;  // the whole file's size
};

struct GrepMatch {
  std::string path;  // relative to the workspace
  int line = 0;
  std::string text;
};

// Paths given to file operations are relative to the workspace root and already checked
// lexically by the caller (no "..", not absolute). The sandbox still refuses to follow a symlink
// out of the workspace (Errc::kForbidden): the check that matters happens where the file is.
class Sandbox {
 public:
  virtual ~Sandbox() = default;
  virtual std::string describe() const = 0;       // "container fg-x-runner" | "local /tmp/ws"
  virtual std::string workspace() const = 0;      // absolute workspace path inside the sandbox
  virtual Result<RunResult> run(const RunRequest& req) = 0;
  virtual Result<FileChunk> read_file(const std::string& rel, std::int64_t offset, std::int64_t limit) = 0;
  virtual Status write_file(const std::string& rel, std::string_view data, bool append) = 0;
  virtual Result<std::vector<DirEntry>> list_dir(const std::string& rel) = 0;
  virtual Result<DirEntry> stat(const std::string& rel) = 0;
  virtual Status move(const std::string& from_rel, const std::string& to_rel) = 0;
  virtual Status copy(const std::string& from_rel, const std::string& to_rel) = 0;
  virtual Status remove(const std::string& rel, bool recursive) = 0;
  // Extended regular expression over files under `rel`, at most `max_matches` results.
  virtual Result<std::vector<GrepMatch>> grep(const std::string& rel, const std::string& pattern, int max_matches) = 0;
};

}  // namespace forge::tools
