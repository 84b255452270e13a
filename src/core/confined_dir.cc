// Confined opens beneath a directory with openat2, and walks that never follow a link out.
#include "core/confined_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#else
struct open_how {
  std::uint64_t flags;
  std::uint64_t mode;
  std::uint64_t resolve;
};
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_NO_SYMLINKS 0x04
#define RESOLVE_BENEATH 0x08
#endif

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

namespace forge {

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

namespace {

std::string q(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string amount(std::uintmax_t bytes) {
  if (bytes >= (std::uintmax_t{1} << 20)) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

EntryKind kind_of(mode_t m) {
  if (S_ISREG(m)) return EntryKind::kFile;
  if (S_ISDIR(m)) return EntryKind::kDirectory;
  return EntryKind::kOther;
}

// "", "." and "a/./b" are fine; an absolute path or any ".." is refused before the kernel sees it,
// so a ".." that would stay inside is refused too: a task names its files plainly.
Status check_rel(std::string_view rel, const std::string& what) {
  if (rel.find('\0') != std::string_view::npos) return fail(Errc::kInvalid, q(rel) + " contains a nul byte");
  if (!rel.empty() && rel.front() == '/') return fail(Errc::kForbidden, q(rel) + " is outside " + what);
  for (std::size_t pos = 0; pos <= rel.size();) {
    std::size_t end = std::min(rel.find('/', pos), rel.size());
    if (rel.substr(pos, end - pos) == "..") return fail(Errc::kForbidden, q(rel) + " is outside " + what);
    pos = end + 1;
  }
  return {};
}

long openat2_raw(int dirfd, const char* path, int flags, std::uint64_t resolve = 0) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | resolve;
  long fd;
  do fd = ::syscall(SYS_openat2, dirfd, path, &how, sizeof how);
  while (fd < 0 && errno == EINTR);
  return fd;
}

// The error of an openat2 that failed with `err` for `rel`, other than a link out (EXDEV).
Error open_error(int err, const std::string& rel, const std::string& what) {
  switch (err) {
    case ELOOP:
      return make_error(Errc::kForbidden,
                        q(rel) + " cannot be resolved beneath " + what + " (a symlink loop, or a link through /proc)");
    case ENOENT:
      return make_error(Errc::kNotFound, q(rel) + " does not exist");
    case ENOTDIR:
      return make_error(Errc::kNotFound, q(rel) + " does not exist (a part of it is not a directory)");
    case EACCES:
    case EPERM:
      return make_error(Errc::kForbidden, "cannot open " + q(rel) + ": permission denied");
    case ENOSYS:
      return make_error(Errc::kIo, "openat2 is not available (Linux 5.6 or later is needed)");
    default:
      return make_error(Errc::kIo, "cannot open " + q(rel) + ": " + std::strerror(err));
  }
}

}  // namespace

Result<ConfinedDir> ConfinedDir::open(const std::string& root, std::string what) {
  int fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) return fail(Errc::kNotFound, what + " " + q(root) + " does not exist");
    return fail(Errc::kIo, "cannot open " + what + " " + q(root) + ": " + std::strerror(err));
  }
  return ConfinedDir(UniqueFd(fd), root, std::move(what));
}

Result<ConfinedDir> ConfinedDir::open_within(const std::string& outer, const std::string& dir, std::string what,
                                             std::string outer_what) {
  auto inner = open(dir, what);
  if (!inner) return inner.fail();
  auto enclosing = open(outer, outer_what);
  if (!enclosing) return enclosing.fail();
  // Both resolved as the kernel sees them, so the climb out of `dir` is a plain walk up its parents.
  char a[PATH_MAX], b[PATH_MAX];
  if (!::realpath(dir.c_str(), a) || !::realpath(outer.c_str(), b))
    return fail(Errc::kIo, "cannot resolve " + q(dir) + ": " + std::strerror(errno));
  std::string inside(a), root(b);
  if (root != "/" && (inside.size() <= root.size() || inside.compare(0, root.size(), root) != 0 || inside[root.size()] != '/'))
    return fail(Errc::kInvalid, what + " " + q(dir) + " is not inside " + outer_what + " " + q(outer));
  ConfinedDir d = std::move(*inner);
  d.outer_fd_ = enclosing->fd_;
  d.outer_what_ = outer_what + " " + q(outer);
  std::string_view below = std::string_view(inside).substr(root == "/" ? 1 : root.size() + 1);
  for (std::size_t pos = 0; pos < below.size();) {
    std::size_t end = std::min(below.find('/', pos), below.size());
    if (end > pos) d.base_.emplace_back(below.substr(pos, end - pos));
    pos = end + 1;
  }
  return d;
}

Result<UniqueFd> ConfinedDir::open_beneath(std::string_view rel_in, int flags) const {
  if (outer_fd_) {
    std::size_t ups = 0;
    std::string_view rest = rel_in;
    while (rest == ".." || rest.substr(0, 3) == "../") {
      ++ups;
      rest.remove_prefix(std::min<std::size_t>(3, rest.size()));
    }
    if (ups > 0) return open_outer(rel_in, ups, rest, flags);
  }
  if (auto st = check_rel(rel_in, what_); !st) return st.fail();
  std::string rel = rel_in.empty() ? "." : std::string(rel_in);
  long fd = openat2_raw(fd_->get(), rel.c_str(), flags);
  if (fd >= 0) return UniqueFd(static_cast<int>(fd));
  int err = errno;
  if (err != EXDEV) return fail(open_error(err, rel, what_));
  // Name the link when `rel` is one itself (its target is a path, not the file's content).
  std::string target;
  auto slash = rel.rfind('/');
  std::string parent = slash == std::string::npos ? "." : rel.substr(0, slash);
  std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
  long pfd = openat2_raw(fd_->get(), parent.c_str(), O_PATH | O_DIRECTORY);
  if (pfd >= 0) {
    char buf[4096];
    ssize_t n = ::readlinkat(static_cast<int>(pfd), name.c_str(), buf, sizeof buf - 1);
    if (n > 0) target = std::string(buf, static_cast<std::size_t>(n));
    ::close(static_cast<int>(pfd));
  }
  return fail(Errc::kForbidden, q(rel) + " leads outside " + what_ +
                                    (target.empty() ? std::string(" (through a symlink)") : " (a symlink to " + q(target) + ")"));
}

Result<UniqueFd> ConfinedDir::open_outer(std::string_view rel_in, std::size_t ups, std::string_view rest, int flags) const {
  const std::string rel(rel_in);
  if (auto st = check_rel(rest, outer_what_); !st)
    return st.error().code == Errc::kForbidden ? fail(Errc::kForbidden, q(rel) + " is outside " + outer_what_) : st.fail();
  if (ups > base_.size()) return fail(Errc::kForbidden, q(rel) + " is outside " + outer_what_);
  std::string joined;
  for (std::size_t i = 0; i + ups < base_.size(); ++i) joined += base_[i] + "/";
  joined += rest;
  while (!joined.empty() && joined.back() == '/') joined.pop_back();
  if (joined.empty()) joined = ".";
  long fd = openat2_raw(outer_fd_->get(), joined.c_str(), flags, RESOLVE_NO_SYMLINKS);
  if (fd >= 0) return UniqueFd(static_cast<int>(fd));
  int err = errno;
  if (err == ELOOP || err == EXDEV)
    return fail(Errc::kForbidden, q(rel) + " goes through a symlink; outside " + what_ + " no symlink is followed");
  return fail(open_error(err, rel, what_));
}

Result<ConfinedStat> ConfinedDir::stat(std::string_view rel) const {
  auto fd = open_beneath(rel, O_PATH);
  if (!fd) return fd.fail();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return fail(Errc::kIo, "cannot stat " + q(rel) + ": " + std::strerror(errno));
  return ConfinedStat{kind_of(st.st_mode), static_cast<std::uint64_t>(st.st_size),
                      static_cast<unsigned>(st.st_mode & 07777)};
}

Result<UniqueFd> ConfinedDir::open_file(std::string_view rel) const {
  // O_NONBLOCK: a fifo planted under the name cannot block the open; checked away just below.
  auto fd = open_beneath(rel, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (!fd) return fd.fail();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return fail(Errc::kIo, "cannot stat " + q(rel) + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return fail(Errc::kInvalid, q(rel) + " is a directory, not a file");
  if (!S_ISREG(st.st_mode)) return fail(Errc::kInvalid, q(rel) + " is not a regular file");
  return fd;
}

Result<std::string> ConfinedDir::read(std::string_view rel, std::size_t max_bytes) const {
  auto fd = open_file(rel);
  if (!fd) return fd.fail();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return fail(Errc::kIo, "cannot stat " + q(rel) + ": " + std::strerror(errno));
  auto too_big = [&](std::uintmax_t n) {
    return fail(Errc::kInvalid, q(rel) + " is " + amount(n) + "; at most " + amount(max_bytes) + " is read");
  };
  if (static_cast<std::uintmax_t>(st.st_size) > max_bytes) return too_big(static_cast<std::uintmax_t>(st.st_size));
  std::string out(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  for (;;) {
    if (got == out.size()) {
      if (out.size() > max_bytes) return too_big(out.size());
      out.resize(std::min(out.size() + 65536, max_bytes + 1));  // a file that grew since fstat
      if (got == out.size()) break;
    }
    ssize_t n = ::read(fd->get(), out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(Errc::kIo, "cannot read " + q(rel) + ": " + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got > max_bytes) return too_big(got);
  out.resize(got);
  return out;
}

struct ConfinedDir::Walk {
  const ConfinedDir& d;
  const TreeLimits& limits;
  const std::function<Status(const TreeEntry&)>& visit;
  const WalkSkip* skip = nullptr;
  std::string base;  // the walked directory, relative to the root
  std::size_t entries = 0;
  std::uintmax_t bytes = 0;

  std::string full(const std::string& entry) const { return base.empty() || base == "." ? entry : base + "/" + entry; }

  Status count(std::uint64_t size) {
    bytes += size;
    if (++entries > limits.max_files || bytes > limits.max_bytes)
      return fail(Errc::kInvalid, q(base.empty() ? "." : base) + " holds more than " +
                                      std::to_string(limits.max_files) + " entries or " + amount(limits.max_bytes));
    return {};
  }

  Status file(const std::string& entry, int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return fail(Errc::kIo, "cannot stat " + q(full(entry)) + ": " + std::strerror(errno));
    if (S_ISDIR(st.st_mode))
      return fail(Errc::kInvalid,
                  q(full(entry)) + " is a symlink to a directory; a copied tree may hold links to files only");
    if (!S_ISREG(st.st_mode)) return fail(Errc::kInvalid, q(full(entry)) + " is neither a file nor a directory");
    if (auto s = count(static_cast<std::uint64_t>(st.st_size)); !s) return s;
    return visit(TreeEntry{entry, EntryKind::kFile, static_cast<unsigned>(st.st_mode & 07777),
                           static_cast<std::uint64_t>(st.st_size), fd});
  }

  Status dir(int dfd, const std::string& sub, int depth) {
    std::vector<std::string> names;
    {
      int copy = ::dup(dfd);
      DIR* dp = copy >= 0 ? ::fdopendir(copy) : nullptr;
      if (!dp) {
        if (copy >= 0) ::close(copy);
        return fail(Errc::kIo, "cannot list " + q(full(sub.empty() ? "." : sub)) + ": " + std::strerror(errno));
      }
      while (dirent* e = ::readdir(dp)) {
        std::string n = e->d_name;
        if (n != "." && n != "..") names.push_back(std::move(n));
        if (names.size() > limits.max_files) break;  // count() reports it
      }
      ::closedir(dp);
    }
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
      const std::string entry = sub.empty() ? name : sub + "/" + name;
      if (depth >= limits.max_depth)
        return fail(Errc::kInvalid,
                    q(full(entry)) + " is nested deeper than " + std::to_string(limits.max_depth) + " levels");
      struct stat st {};
      if (::fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return fail(Errc::kIo, "cannot stat " + q(full(entry)) + ": " + std::strerror(errno));
      if (skip && *skip && (*skip)(entry, S_ISDIR(st.st_mode) ? EntryKind::kDirectory : EntryKind::kFile)) continue;
      if (S_ISLNK(st.st_mode)) {
        // Resolved from the root again, so the link is confined like any path the task names.
        auto fd = d.open_beneath(full(entry), O_RDONLY | O_NONBLOCK | O_NOCTTY);
        if (!fd) return fd.fail();
        if (auto s = file(entry, fd->get()); !s) return s;
      } else if (S_ISDIR(st.st_mode)) {
        UniqueFd fd(::openat(dfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!fd) return fail(Errc::kIo, "cannot open " + q(full(entry)) + ": " + std::strerror(errno));
        if (auto s = count(0); !s) return s;
        if (auto s = visit(TreeEntry{entry, EntryKind::kDirectory, static_cast<unsigned>(st.st_mode & 07777), 0, -1});
            !s)
          return s;
        if (auto s = dir(fd.get(), entry, depth + 1); !s) return s;
      } else if (S_ISREG(st.st_mode)) {
        // O_NOFOLLOW: a file swapped for a link since the fstatat is refused, not followed.
        UniqueFd fd(::openat(dfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
        if (!fd) return fail(Errc::kIo, "cannot open " + q(full(entry)) + ": " + std::strerror(errno));
        if (auto s = file(entry, fd.get()); !s) return s;
      } else {
        return fail(Errc::kInvalid, q(full(entry)) + " is neither a file nor a directory");
      }
    }
    return {};
  }
};

Status ConfinedDir::walk(std::string_view rel, const TreeLimits& limits,
                         const std::function<Status(const TreeEntry&)>& visit) const {
  return walk(rel, limits, WalkSkip(), visit);
}

Status ConfinedDir::walk(std::string_view rel, const TreeLimits& limits, const WalkSkip& skip,
                         const std::function<Status(const TreeEntry&)>& visit) const {
  auto st = stat(rel);
  if (!st) return st.fail();
  if (st->kind != EntryKind::kDirectory)
    return fail(Errc::kInvalid, q(rel.empty() ? "." : rel) + " is not a directory");
  auto fd = open_beneath(rel, O_RDONLY | O_DIRECTORY);
  if (!fd) return fd.fail();
  Walk w{*this, limits, visit, &skip, std::string(rel)};
  return w.dir(fd->get(), "", 0);
}

}  // namespace forge
