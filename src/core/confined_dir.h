// A directory's files opened so that no path leaves it: every open is openat2(RESOLVE_BENEATH |
// RESOLVE_NO_MAGICLINKS) from the directory's descriptor, so the kernel — not a string check that
// a rename could race — refuses an absolute symlink, a ".." out or a /proc magic link. Task files
// are read only through this (www/, fixtures, prompts, env files, tests/, solution/, MCP files).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace forge {

// An owned file descriptor.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

enum class EntryKind { kFile, kDirectory, kOther };

struct ConfinedStat {
  EntryKind kind = EntryKind::kOther;
  std::uint64_t size = 0;
  unsigned mode = 0;  // permission bits
};

// What a tree that forgectl copies somewhere may hold.
struct TreeLimits {
  std::size_t max_files;
  std::uintmax_t max_bytes;  // all regular files together
  int max_depth;
};

// One entry of a walk, in sorted order, a directory before what it holds.
struct TreeEntry {
  std::string rel;                    // relative to the walked directory: "index.html", "css/site.css"
  EntryKind kind = EntryKind::kFile;  // kFile or kDirectory
  unsigned mode = 0;                  // permission bits
  std::uint64_t size = 0;             // files
  int fd = -1;                        // files: open for reading, valid during the callback only
};

class ConfinedDir {
 public:
  // Opens `root`; `what` names it in messages ("the task directory"). `root` itself may be
  // reached through symlinks: it is the directory the user named.
  static Result<ConfinedDir> open(const std::string& root, std::string what = "the task directory");
  // `dir` confined as open() confines it, inside an enclosing directory `outer` that holds it (a
  // project's root): a path may also start with ".." components that climb out of `dir`, as long
  // as it stays beneath `outer`. Such a path is resolved from `outer` and follows no symlink at
  // all (RESOLVE_NO_SYMLINKS), so outside its own directory a task reaches plain files only; a
  // path without a leading ".." is confined to `dir` exactly as open() confines it.
  static Result<ConfinedDir> open_within(const std::string& outer, const std::string& dir,
                                         std::string what = "the task directory", std::string outer_what = "the project");

  const std::string& root() const { return root_; }

  // Errors name `rel` and never quote a file's content:
  //   kForbidden: `rel` is absolute, has a ".." component, or leads outside through a symlink;
  //   kNotFound: it does not exist (or a dangling symlink);
  //   kInvalid: the wrong kind (not a regular file, not a directory), or too large; kIo otherwise.
  Result<ConfinedStat> stat(std::string_view rel) const;
  // A regular file, open for reading.
  Result<UniqueFd> open_file(std::string_view rel) const;
  // The whole of a regular file of at most `max_bytes`.
  Result<std::string> read(std::string_view rel, std::size_t max_bytes) const;
  // Every entry under directory `rel` (`""` or "." is the root), depth first. A symlink inside is
  // resolved from the root again: to a file within the directory it is that file; out of the
  // directory, to a directory, or dangling, the walk fails. Devices, fifos and sockets fail it,
  // as do `limits`. `visit`'s error stops the walk and is returned.
  Status walk(std::string_view rel, const TreeLimits& limits,
              const std::function<Status(const TreeEntry&)>& visit) const;
  // The same, leaving out each entry `skip` names (its path relative to `rel`, and whether it is
  // a directory; a symlink counts as a file): it is neither visited nor counted, nor is anything
  // a skipped directory holds (which may then exceed the limits, or hold links out).
  using WalkSkip = std::function<bool(const std::string& rel, EntryKind kind)>;
  Status walk(std::string_view rel, const TreeLimits& limits, const WalkSkip& skip,
              const std::function<Status(const TreeEntry&)>& visit) const;

 private:
  ConfinedDir(UniqueFd fd, std::string root, std::string what)
      : fd_(std::make_shared<UniqueFd>(std::move(fd))), root_(std::move(root)), what_(std::move(what)) {}
  Result<UniqueFd> open_beneath(std::string_view rel, int flags) const;
  // A path with leading ".." components, resolved from outer_fd_.
  Result<UniqueFd> open_outer(std::string_view rel, std::size_t ups, std::string_view rest, int flags) const;
  struct Walk;

  std::shared_ptr<UniqueFd> fd_;  // shared: copies of a ConfinedDir use one descriptor
  std::string root_, what_;
  // open_within(): the enclosing directory, and root_ relative to it ("tasks/t1"); null otherwise.
  std::shared_ptr<UniqueFd> outer_fd_;
  std::vector<std::string> base_;  // root_'s components below the enclosing directory
  std::string outer_what_;
};

}  // namespace forge
