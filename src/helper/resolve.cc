// Path resolution beneath the workspace root: the kernel, not string checks, decides where a
// path leads, so symlinks planted by the agent cannot point the helper outside.
#include "helper/resolve.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#else
#include <cstdint>
struct open_how {
  std::uint64_t flags;
  std::uint64_t mode;
  std::uint64_t resolve;
};
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_BENEATH 0x08
#endif

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

namespace forge::helper {

OpStatus split_rel(std::string_view rel, std::vector<std::string>* parts) {
  parts->clear();
  if (!rel.empty() && rel.front() == '/')
    return op_error(OpCode::kForbidden, "'" + std::string(rel) + "' is absolute; paths are relative to the workspace");
  if (rel.find('\0') != std::string_view::npos) return op_error(OpCode::kInvalid, "path contains a NUL byte");
  std::size_t pos = 0;
  while (pos <= rel.size()) {
    std::size_t end = rel.find('/', pos);
    if (end == std::string_view::npos) end = rel.size();
    std::string_view part = rel.substr(pos, end - pos);
    if (part == "..") return op_error(OpCode::kForbidden, "'" + std::string(rel) + "' leaves the workspace ('..')");
    if (!part.empty() && part != ".") parts->emplace_back(part);
    pos = end + 1;
  }
  return {};
}

std::string join_parts(const std::vector<std::string>& parts, std::size_t n) {
  if (n == 0) return ".";
  std::string s = parts[0];
  for (std::size_t i = 1; i < n; ++i) s += "/" + parts[i];
  return s;
}

OpStatus open_beneath(const Root& r, const std::string& rel, int flags, unsigned mode, Fd* out) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
  how.mode = (flags & O_CREAT) ? mode : 0;  // openat2 refuses a mode without O_CREAT
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  long fd;
  do fd = syscall(SYS_openat2, r.fd(), rel.c_str(), &how, sizeof how);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    int err = errno;
    if (err == EXDEV) return op_error(OpCode::kForbidden, "'" + rel + "' leads outside the workspace");
    if (err == ENOSYS) return walk_beneath(r, rel, flags, mode, out);  // gVisor has no openat2
    return errno_status(err, rel);
  }
  out->reset(static_cast<int>(fd));
  return {};
}

OpStatus open_parent(const Root& r, std::string_view rel, bool create_missing, Parent* out) {
  std::vector<std::string> parts;
  if (auto st = split_rel(rel, &parts); !st.ok()) return st;
  if (parts.empty()) return op_error(OpCode::kInvalid, "the workspace root itself cannot be the target");
  out->rel = join_parts(parts, parts.size());
  out->name = parts.back();
  const std::size_t n = parts.size() - 1;
  if (create_missing) {
    // Each level is resolved from the root again, so a symlinked parent is confined like any path.
    for (std::size_t i = 0; i < n; ++i) {
      Fd probe;
      OpStatus st = open_beneath(r, join_parts(parts, i + 1), O_PATH | O_DIRECTORY, 0, &probe);
      if (st.ok()) continue;
      if (st.code != OpCode::kNotFound) return st;
      Fd above;
      if (auto a = open_beneath(r, join_parts(parts, i), O_PATH | O_DIRECTORY, 0, &above); !a.ok()) return a;
      if (mkdirat(above.get(), parts[i].c_str(), 0755) != 0 && errno != EEXIST)
        return errno_status(errno, join_parts(parts, i + 1));
    }
  }
  return open_beneath(r, join_parts(parts, n), O_PATH | O_DIRECTORY, 0, &out->dir);
}

}  // namespace forge::helper
