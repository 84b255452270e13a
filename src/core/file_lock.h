// An exclusive flock on a file, held for the lifetime of a FileLock (or of the process).
#pragma once

#include <string>
#include <utility>

#include "core/result.h"

namespace forge {

class FileLock {
 public:
  // Creates `path` (and its directory) when missing and waits until the lock is ours. The file is
  // never removed: removing it would let two processes lock different inodes. flock belongs to
  // the open file, so the kernel drops it when the holder dies however it dies.
  static Result<FileLock> acquire(const std::string& path);
  // As acquire, but kConflict at once when another open file holds it.
  static Result<FileLock> try_acquire(const std::string& path);

  FileLock(FileLock&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  FileLock& operator=(FileLock&& o) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();  // closing releases the lock

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  static Result<FileLock> lock(const std::string& path, bool wait);
  int fd_ = -1;
};

}  // namespace forge
