// Resolving workspace-relative paths beneath a root with openat2 (internal to the helper ops).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "helper/ops.h"

namespace forge::helper {

// The path's components, "." and empty ones dropped; absolute paths and ".." are kForbidden.
OpStatus split_rel(std::string_view rel, std::vector<std::string>* parts);
std::string join_parts(const std::vector<std::string>& parts, std::size_t n);  // "." when n == 0

// openat2(root, rel, flags, mode, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS); EXDEV → kForbidden.
// Where the kernel has no openat2 (ENOSYS: gVisor), walk_beneath gives the same confinement.
OpStatus open_beneath(const Root& r, const std::string& rel, int flags, unsigned mode, Fd* out);
// The same, walked one O_NOFOLLOW component at a time from held directory fds (resolve_walk.cc).
OpStatus walk_beneath(const Root& r, const std::string& rel, int flags, unsigned mode, Fd* out);

// The directory holding the last component (O_PATH) and that component's name. The root
// itself has no parent: kInvalid.
struct Parent {
  Fd dir;
  std::string name;
  std::string rel;  // the normalised whole path, for messages
};
OpStatus open_parent(const Root& r, std::string_view rel, bool create_missing, Parent* out);

}  // namespace forge::helper
