// FileLock: flock(2) on a file that is created once and never removed.
#include "core/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace forge {

FileLock& FileLock::operator=(FileLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);
}

Result<FileLock> FileLock::lock(const std::string& path, bool wait) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return fail(Errc::kIo, "cannot open " + path + ": " + std::strerror(errno));
  FileLock held(fd);  // closes fd on every error below
  while (::flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK && !wait) return fail(Errc::kConflict, path + " is locked by another process");
    return fail(Errc::kIo, "cannot lock " + path + ": " + std::strerror(errno));
  }
  return held;
}

Result<FileLock> FileLock::acquire(const std::string& path) { return lock(path, true); }
Result<FileLock> FileLock::try_acquire(const std::string& path) { return lock(path, false); }

}  // namespace forge
