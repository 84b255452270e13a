// The operations that walk directory trees: copy, remove and grep. Below the resolved top, the
// walk goes name by name through directory fds with O_NOFOLLOW, so a symlink is never entered.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "helper/ops.h"
#include "helper/resolve.h"

namespace forge::helper {

namespace {

constexpr int kMaxDepth = 128;  // bounds the open fds of a walk
constexpr std::size_t kBinaryProbe = 8192;

// The names in an open directory (not "." and ".."), sorted; `dirfd` stays ours.
OpStatus dir_names(int dirfd, const std::string& what, std::vector<std::string>* out) {
  int dup = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) return errno_status(errno, what);
  DIR* dir = fdopendir(dup);
  if (dir == nullptr) {
    int err = errno;
    ::close(dup);
    return errno_status(err, what);
  }
  out->clear();
  while (const dirent* de = readdir(dir))
    if (std::strcmp(de->d_name, ".") != 0 && std::strcmp(de->d_name, "..") != 0) out->emplace_back(de->d_name);
  closedir(dir);
  std::sort(out->begin(), out->end());
  return {};
}

OpStatus copy_file_fd(int src, int dst, const std::string& what) {
  char buf[64 * 1024];
  for (;;) {
    ssize_t n = ::read(src, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_status(errno, what);
    if (n == 0) return {};
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::write(dst, buf + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return errno_status(errno, what);
      done += w;
    }
  }
}

// Copies entry `name` of directory `sdir` to `name` in `ddir`; `what` is its relative path.
OpStatus copy_entry(int sdir, int ddir, const std::string& name, const std::string& what, int depth) {
  if (depth > kMaxDepth) return op_error(OpCode::kInvalid, "'" + what + "' is nested too deeply");
  struct stat sb {};
  if (fstatat(sdir, name.c_str(), &sb, AT_SYMLINK_NOFOLLOW) != 0) return errno_status(errno, what);
  if (S_ISLNK(sb.st_mode)) {
    std::string target(static_cast<std::size_t>(sb.st_size) + 1, '\0');
    ssize_t n = readlinkat(sdir, name.c_str(), target.data(), target.size());
    if (n < 0) return errno_status(errno, what);
    target.resize(static_cast<std::size_t>(n));
    if (symlinkat(target.c_str(), ddir, name.c_str()) != 0) return errno_status(errno, what);
    return {};
  }
  if (S_ISREG(sb.st_mode)) {
    Fd in(openat(sdir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
    if (!in.valid()) return errno_status(errno, what);
    Fd out(openat(ddir, name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, sb.st_mode & 07777));
    if (!out.valid()) return errno_status(errno, what);
    return copy_file_fd(in.get(), out.get(), what);
  }
  if (!S_ISDIR(sb.st_mode)) return {};  // fifos, sockets, devices are not copied
  if (mkdirat(ddir, name.c_str(), (sb.st_mode & 07777) | 0700) != 0 && errno != EEXIST)
    return errno_status(errno, what);
  Fd src(openat(sdir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!src.valid()) return errno_status(errno, what);
  Fd dst(openat(ddir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dst.valid()) return errno_status(errno, what);
  std::vector<std::string> names;
  if (auto st = dir_names(src.get(), what, &names); !st.ok()) return st;
  for (const auto& n : names)
    if (auto st = copy_entry(src.get(), dst.get(), n, what + "/" + n, depth + 1); !st.ok()) return st;
  return {};
}

// Removes everything inside directory `dirfd`.
OpStatus empty_dir(int dirfd, const std::string& what, int depth) {
  if (depth > kMaxDepth) return op_error(OpCode::kInvalid, "'" + what + "' is nested too deeply");
  std::vector<std::string> names;
  if (auto st = dir_names(dirfd, what, &names); !st.ok()) return st;
  for (const auto& n : names) {
    const std::string sub = what + "/" + n;
    if (unlinkat(dirfd, n.c_str(), 0) == 0) continue;
    if (errno != EISDIR && errno != EPERM) return errno_status(errno, sub);
    Fd child(openat(dirfd, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!child.valid()) return errno_status(errno, sub);
    if (auto st = empty_dir(child.get(), sub, depth + 1); !st.ok()) return st;
    if (unlinkat(dirfd, n.c_str(), AT_REMOVEDIR) != 0) return errno_status(errno, sub);
  }
  return {};
}

struct Grep {
  regex_t re;
  int max_matches;
  std::vector<Match>* out;
  bool full() const { return static_cast<int>(out->size()) >= max_matches; }
};

OpStatus grep_fd(Grep& g, int fd, const std::string& what) {
  struct stat sb {};
  if (fstat(fd, &sb) != 0 || sb.st_size > kMaxGrepFileSize) return {};
  std::string text(static_cast<std::size_t>(sb.st_size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  if (text.find('\0') < kBinaryProbe) return {};  // binary
  int line = 0;
  for (std::size_t pos = 0; pos < text.size() && !g.full();) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    ++line;
    std::string l = text.substr(pos, end - pos);  // regexec needs a NUL-terminated line
    if (l.find('\0') == std::string::npos && regexec(&g.re, l.c_str(), 0, nullptr, 0) == 0) {
      if (l.size() > kMaxMatchText) l.resize(kMaxMatchText);
      g.out->push_back(Match{what, line, std::move(l)});
    }
    pos = end + 1;
  }
  return {};
}

OpStatus grep_dir(Grep& g, int dirfd, const std::string& what, int depth) {
  if (depth > kMaxDepth) return {};
  std::vector<std::string> names;
  if (auto st = dir_names(dirfd, what, &names); !st.ok()) return st;
  for (const auto& n : names) {
    if (g.full()) break;
    const std::string sub = what == "." ? n : what + "/" + n;
    struct stat sb {};
    if (fstatat(dirfd, n.c_str(), &sb, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)) continue;
    // O_NONBLOCK: a fifo swapped in after the fstatat must not block the walk.
    Fd fd(openat(dirfd, n.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!fd.valid()) continue;  // unreadable entries are skipped, like grep -s
    struct stat again {};
    if (fstat(fd.get(), &again) != 0) continue;
    if (S_ISDIR(again.st_mode)) {
      if (auto st = grep_dir(g, fd.get(), sub, depth + 1); !st.ok()) return st;
    } else if (S_ISREG(again.st_mode)) {
      if (auto st = grep_fd(g, fd.get(), sub); !st.ok()) return st;
    }
  }
  return {};
}

}  // namespace

OpStatus copy_path(const Root& r, std::string_view from, std::string_view to) {
  Parent src, dst;
  if (auto st = open_parent(r, from, false, &src); !st.ok()) return st;
  if (auto st = open_parent(r, to, true, &dst); !st.ok()) return st;
  if (dst.rel == src.rel || dst.rel.rfind(src.rel + "/", 0) == 0)
    return op_error(OpCode::kInvalid, "cannot copy '" + src.rel + "' into itself");
  // The top is resolved (and confined) like any path; it may be a symlink to something inside.
  Fd in;
  if (auto st = open_beneath(r, src.rel, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0, &in); !st.ok()) return st;
  struct stat sb {};
  if (fstat(in.get(), &sb) != 0) return errno_status(errno, src.rel);
  if (S_ISREG(sb.st_mode)) {
    Fd out;
    if (auto st = open_beneath(r, dst.rel, O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY, sb.st_mode & 07777, &out); !st.ok())
      return st;
    return copy_file_fd(in.get(), out.get(), src.rel);
  }
  if (!S_ISDIR(sb.st_mode)) return op_error(OpCode::kInvalid, "'" + src.rel + "' is not a file or directory");
  // Names first: a destination inside the source (through a symlinked parent) is not copied again.
  std::vector<std::string> names;
  if (auto st = dir_names(in.get(), src.rel, &names); !st.ok()) return st;
  if (mkdirat(dst.dir.get(), dst.name.c_str(), (sb.st_mode & 07777) | 0700) != 0 && errno != EEXIST)
    return errno_status(errno, dst.rel);
  Fd out;
  if (auto st = open_beneath(r, dst.rel, O_RDONLY | O_DIRECTORY, 0, &out); !st.ok()) return st;
  for (const auto& n : names)
    if (auto st = copy_entry(in.get(), out.get(), n, src.rel + "/" + n, 1); !st.ok()) return st;
  return {};
}

OpStatus remove_path(const Root& r, std::string_view rel, bool recursive) {
  Parent p;
  if (auto st = open_parent(r, rel, false, &p); !st.ok()) return st;
  if (unlinkat(p.dir.get(), p.name.c_str(), 0) == 0) return {};
  if (errno != EISDIR && errno != EPERM) return errno_status(errno, p.rel);
  if (recursive) {
    Fd dir(openat(p.dir.get(), p.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir.valid()) return errno_status(errno, p.rel);
    if (auto st = empty_dir(dir.get(), p.rel, 1); !st.ok()) return st;
  }
  if (unlinkat(p.dir.get(), p.name.c_str(), AT_REMOVEDIR) != 0) {
    if (errno == ENOTEMPTY || errno == EEXIST)
      return op_error(OpCode::kInvalid, "'" + p.rel + "' is a directory that is not empty (remove it recursively)");
    return errno_status(errno, p.rel);
  }
  return {};
}

OpStatus grep(const Root& r, std::string_view rel, const std::string& pattern, int max_matches,
              std::vector<Match>* out) {
  out->clear();
  if (max_matches <= 0) return op_error(OpCode::kInvalid, "max_matches must be positive");
  std::vector<std::string> parts;
  if (auto st = split_rel(rel, &parts); !st.ok()) return st;
  const std::string path = join_parts(parts, parts.size());
  Grep g{{}, max_matches, out};
  if (int rc = regcomp(&g.re, pattern.c_str(), REG_EXTENDED | REG_NOSUB); rc != 0) {
    char msg[256];
    regerror(rc, &g.re, msg, sizeof msg);
    return op_error(OpCode::kInvalid, "invalid regular expression '" + pattern + "': " + msg);
  }
  std::unique_ptr<regex_t, void (*)(regex_t*)> free_re(&g.re, regfree);
  Fd fd;
  if (auto st = open_beneath(r, path, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0, &fd); !st.ok()) return st;
  struct stat sb {};
  if (fstat(fd.get(), &sb) != 0) return errno_status(errno, path);
  if (S_ISDIR(sb.st_mode)) return grep_dir(g, fd.get(), path, 0);
  if (S_ISREG(sb.st_mode)) return grep_fd(g, fd.get(), path);
  return op_error(OpCode::kInvalid, "'" + path + "' is not a file or directory");
}

}  // namespace forge::helper
