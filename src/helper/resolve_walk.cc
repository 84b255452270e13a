// RESOLVE_BENEATH without openat2: gVisor (runsc) does not implement openat2, so the helper walks
// the path itself, one component at a time, each opened O_NOFOLLOW relative to the directory fd
// above it. Symlinks are read and spliced in as text; ".." pops a held fd and never goes above
// the root; an absolute link target leaves the workspace (as openat2 says with EXDEV). Because
// every step is anchored to an fd already beneath the root, renaming things under the walk
// cannot lead it out.
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <deque>
#include <vector>

#include "helper/resolve.h"

namespace forge::helper {

namespace {

constexpr int kMaxLinks = 40;  // the kernel's own limit before ELOOP

OpStatus outside(const std::string& rel) {
  return op_error(OpCode::kForbidden, "'" + rel + "' leads outside the workspace");
}

// Splits a link's text into components ("." and empty dropped; ".." kept, the walk handles it).
void push_front_parts(std::deque<std::string>& todo, const std::string& text) {
  std::vector<std::string> parts;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('/', pos);
    if (end == std::string::npos) end = text.size();
    std::string part = text.substr(pos, end - pos);
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
    pos = end + 1;
  }
  todo.insert(todo.begin(), parts.begin(), parts.end());
}

bool is_symlink(int fd) {
  struct stat st {};
  return fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

std::string link_text(int fd) {
  char buf[4096];
  const ssize_t n = readlinkat(fd, "", buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

}  // namespace

OpStatus walk_beneath(const Root& r, const std::string& rel, int flags, unsigned mode, Fd* out) {
  std::deque<std::string> todo;
  if (!rel.empty() && rel.front() == '/') return outside(rel);
  push_front_parts(todo, rel);
  std::vector<Fd> stack;  // the directories walked into; empty: the root
  auto here = [&] { return stack.empty() ? r.fd() : stack.back().get(); };
  int links = 0;
  while (!todo.empty()) {
    const std::string name = todo.front();
    todo.pop_front();
    if (name == "..") {
      if (stack.empty()) return outside(rel);
      stack.pop_back();
      continue;
    }
    const bool last = todo.empty();
    if (last && (flags & O_PATH) == 0) {
      // The final component with the caller's flags: a symlink shows as ELOOP under O_NOFOLLOW.
      int fd;
      do fd = openat(here(), name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, (flags & O_CREAT) ? mode : 0);
      while (fd < 0 && errno == EINTR);
      if (fd >= 0) {
        out->reset(fd);
        return {};
      }
      if (errno != ELOOP || (flags & O_NOFOLLOW)) return errno_status(errno, rel);
    }
    // A directory to go through (or an O_PATH target): opened as itself, a link not followed.
    int fd;
    do fd = openat(here(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) return errno_status(errno, rel);
    Fd step(fd);
    if (is_symlink(fd) && !(last && (flags & O_NOFOLLOW))) {
      if (++links > kMaxLinks) return errno_status(ELOOP, rel);
      const std::string target = link_text(fd);
      if (target.empty() || target.front() == '/') return outside(rel);
      push_front_parts(todo, target);
      continue;
    }
    if (last) {
      // O_PATH callers: check what they asked of the type (O_DIRECTORY) as openat would.
      struct stat st {};
      if ((flags & O_DIRECTORY) && (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode))) return errno_status(ENOTDIR, rel);
      *out = std::move(step);
      return {};
    }
    stack.push_back(std::move(step));
  }
  // The root itself (an empty path, or one that walked back to it).
  int fd = stack.empty() ? openat(r.fd(), ".", flags | O_CLOEXEC) : openat(stack.back().get(), ".", flags | O_CLOEXEC);
  if (fd < 0) return errno_status(errno, rel);
  out->reset(fd);
  return {};
}

}  // namespace forge::helper
