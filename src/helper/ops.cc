// The workspace and the single-path file operations: read, write, list, stat, move, symlink.
#include "helper/ops.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "helper/resolve.h"

namespace forge::helper {

const char* op_code_name(OpCode c) {
  switch (c) {
    case OpCode::kOk:
      return "ok";
    case OpCode::kNotFound:
      return "not_found";
    case OpCode::kForbidden:
      return "forbidden";
    case OpCode::kInvalid:
      return "invalid";
    case OpCode::kIo:
      return "io";
    case OpCode::kTimeout:
      return "timeout";
  }
  return "io";
}

const char* entry_kind_name(EntryKind k) {
  switch (k) {
    case EntryKind::kFile:
      return "file";
    case EntryKind::kDirectory:
      return "dir";
    case EntryKind::kSymlink:
      return "symlink";
    case EntryKind::kOther:
      return "other";
  }
  return "other";
}

OpStatus op_error(OpCode code, std::string message) { return OpStatus{code, std::move(message)}; }

OpStatus errno_status(int err, std::string_view what) {
  OpCode code = OpCode::kIo;
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      code = OpCode::kNotFound;
      break;
    case EXDEV:
    case ELOOP:
    case EACCES:
    case EPERM:
    case EROFS:
      code = OpCode::kForbidden;
      break;
    case EISDIR:
    case ENOTEMPTY:
    case EEXIST:
    case EINVAL:
    case ENAMETOOLONG:
    case EBUSY:
      code = OpCode::kInvalid;
      break;
    default:
      break;
  }
  return op_error(code, "'" + std::string(what) + "': " + std::strerror(err));
}

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

OpStatus Root::open(const std::string& abs_path, Root* out) {
  if (abs_path.empty() || abs_path.front() != '/')
    return op_error(OpCode::kInvalid, "workspace root '" + abs_path + "' is not an absolute path");
  int fd = ::open(abs_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno_status(errno, abs_path);
  out->fd_.reset(fd);
  out->path_ = abs_path;
  return {};
}

namespace {

Entry entry_from_stat(std::string name, const struct stat& st) {
  Entry e;
  e.name = std::move(name);
  e.kind = S_ISREG(st.st_mode)   ? EntryKind::kFile
           : S_ISDIR(st.st_mode) ? EntryKind::kDirectory
           : S_ISLNK(st.st_mode) ? EntryKind::kSymlink
                                 : EntryKind::kOther;
  e.size = static_cast<std::int64_t>(st.st_size);
  e.mode = st.st_mode & 07777;
  return e;
}

OpStatus write_all(int fd, std::string_view data, const std::string& what) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_status(errno, what);
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

}  // namespace

OpStatus read_file(const Root& r, std::string_view rel, std::int64_t offset, std::int64_t limit, Chunk* out) {
  if (offset < 0 || limit < 0) return op_error(OpCode::kInvalid, "offset and limit must not be negative");
  std::vector<std::string> parts;
  if (auto st = split_rel(rel, &parts); !st.ok()) return st;
  const std::string path = join_parts(parts, parts.size());
  Fd fd;
  if (auto st = open_beneath(r, path, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0, &fd); !st.ok()) return st;
  struct stat sb {};
  if (fstat(fd.get(), &sb) != 0) return errno_status(errno, path);
  // A fifo or device could block the helper forever or never end.
  if (!S_ISREG(sb.st_mode))
    return op_error(OpCode::kInvalid,
                    "'" + path + "' is " + (S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file"));
  out->size = static_cast<std::int64_t>(sb.st_size);
  out->data.clear();
  const std::int64_t want = std::min({limit, kMaxReadLimit, std::max<std::int64_t>(out->size - offset, 0)});
  out->data.resize(static_cast<std::size_t>(want));
  std::size_t got = 0;
  while (got < out->data.size()) {
    ssize_t n = pread(fd.get(), out->data.data() + got, out->data.size() - got,
                      static_cast<off_t>(offset) + static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_status(errno, path);
    if (n == 0) break;  // shrank under us
    got += static_cast<std::size_t>(n);
  }
  out->data.resize(got);
  return {};
}

OpStatus write_file(const Root& r, std::string_view rel, std::string_view data, bool append) {
  Parent p;
  if (auto st = open_parent(r, rel, true, &p); !st.ok()) return st;
  Fd fd;
  const int flags = O_WRONLY | O_CREAT | O_NOCTTY | O_NONBLOCK | (append ? O_APPEND : O_TRUNC);
  if (auto st = open_beneath(r, p.rel, flags, 0644, &fd); !st.ok()) return st;
  struct stat sb {};
  if (fstat(fd.get(), &sb) != 0) return errno_status(errno, p.rel);
  if (!S_ISREG(sb.st_mode)) return op_error(OpCode::kInvalid, "'" + p.rel + "' is not a regular file");
  return write_all(fd.get(), data, p.rel);
}

OpStatus list_dir(const Root& r, std::string_view rel, std::vector<Entry>* out) {
  std::vector<std::string> parts;
  if (auto st = split_rel(rel, &parts); !st.ok()) return st;
  const std::string path = join_parts(parts, parts.size());
  Fd fd;
  if (auto st = open_beneath(r, path, O_RDONLY | O_DIRECTORY, 0, &fd); !st.ok()) return st;
  DIR* dir = fdopendir(fd.get());
  if (dir == nullptr) return errno_status(errno, path);
  const int dfd = fd.release();  // now owned by `dir`
  out->clear();
  while (const dirent* de = readdir(dir)) {
    if (std::strcmp(de->d_name, ".") == 0 || std::strcmp(de->d_name, "..") == 0) continue;
    struct stat sb {};
    if (fstatat(dfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0) continue;  // removed meanwhile
    out->push_back(entry_from_stat(de->d_name, sb));
  }
  closedir(dir);
  std::sort(out->begin(), out->end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return {};
}

OpStatus stat_path(const Root& r, std::string_view rel, Entry* out) {
  std::vector<std::string> parts;
  if (auto st = split_rel(rel, &parts); !st.ok()) return st;
  const std::string path = join_parts(parts, parts.size());
  Fd fd;
  if (auto st = open_beneath(r, path, O_PATH, 0, &fd); !st.ok()) return st;
  struct stat sb {};
  if (fstat(fd.get(), &sb) != 0) return errno_status(errno, path);
  *out = entry_from_stat(parts.empty() ? "." : parts.back(), sb);
  return {};
}

OpStatus move_path(const Root& r, std::string_view from, std::string_view to) {
  Parent src, dst;
  if (auto st = open_parent(r, from, false, &src); !st.ok()) return st;
  if (auto st = open_parent(r, to, true, &dst); !st.ok()) return st;
  // The last components are names in already-confined directories: rename moves a symlink
  // itself, never what it points at.
  if (renameat(src.dir.get(), src.name.c_str(), dst.dir.get(), dst.name.c_str()) != 0)
    return errno_status(errno, src.rel + "' -> '" + dst.rel);
  return {};
}

OpStatus make_symlink(const Root& r, std::string_view target, std::string_view rel) {
  if (target.empty() || target.find('\0') != std::string_view::npos)
    return op_error(OpCode::kInvalid, "invalid symlink target");
  Parent p;
  if (auto st = open_parent(r, rel, true, &p); !st.ok()) return st;
  if (symlinkat(std::string(target).c_str(), p.dir.get(), p.name.c_str()) != 0) return errno_status(errno, p.rel);
  return {};
}

}  // namespace forge::helper
