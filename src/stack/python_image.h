// forgectl/python:local: a Debian 13 rootfs from debootstrap (python3, pydantic 2) plus forgectl's python/ tree.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/client.h"
#include "stack/local_images.h"

namespace forge::stack {

// The image task MCP servers and checks run in; its base (the bare rootfs) is a separate image so a
// change to python/ rebuilds in seconds, without debootstrap.
inline constexpr const char* kPythonImage = "forgectl/python:local";
inline constexpr const char* kPythonBaseImage = "forgectl/python-base:local";
// On both, kContentLabel (local_images.h) is the hex SHA-256 of what the image was made from (mirror,
// suite, packages, layout; plus the python/ tree for the final image). An image whose label matches
// is not rebuilt.
// Where the python/ tree sits in the image (on sys.path through a .pth file), and its user.
inline constexpr const char* kPythonTreeDir = "/opt/forgectl/python";
inline constexpr const char* kPythonImageUser = "1000:1000";

struct PythonImageOptions {
  std::string debian_mirror;  // required, e.g. http://deb.debian.org/debian (the caller picks the default)
  // Debian 13: its python3-pydantic is 2.x (Debian 12's is 1.10, which task servers cannot use).
  std::string suite = "trixie";
  // busybox: its nc is what http_request and the db tools send requests with (linked as nc).
  std::vector<std::string> packages = {"python3", "python3-pydantic", "busybox"};
  std::string python_tree;  // forgectl's python/ directory; empty: find_python_tree()
  std::string debootstrap = "/usr/sbin/debootstrap";
  // The final image's tag (its base's is always kPythonBaseImage). Tasks run on kPythonImage; a test
  // builds a changed tree under a tag of its own, so trials running beside it keep theirs.
  std::string tag = kPythonImage;
  std::string
      scratch_dir;  // where the rootfs is assembled (about 300 MB, removed after; needs dev and exec); empty: /var/tmp
};

// forgectl's python/ tree: installed beside the binary (../share/forgectl/python), else the source tree
// this forgectl was built from.
Result<std::string> find_python_tree();

// Hex SHA-256 over the tree's files (relative path and bytes, sorted; __pycache__ and *.pyc skipped).
Result<std::string> python_tree_digest(const std::string& dir);

// The content key of the base image for these options. Refuses a mirror that is not http(s)://… and
// package or suite names debootstrap would not take.
Result<std::string> python_base_key(const PythonImageOptions& o);

// The base image's build context: the rootfs at `rootfs` without the contents of dev, proc, sys, run,
// tmp, var/tmp, apt's caches and lists, docs, man pages and translations; user agent (1000:1000) added
// to etc/passwd and etc/group; setuid and setgid bits dropped (nothing in a sandbox needs them);
// /home/agent and /work owned by agent. Device nodes, fifos and sockets are left out.
Result<std::string> python_base_context(const std::string& rootfs);
// The final image's build context: FROM the base, `tree` at kPythonTreeDir (without __pycache__ and
// *.pyc; symlinks left out), a .pth file putting it on sys.path, USER agent, WORKDIR /work.
Result<std::string> python_image_context(const std::string& tree);

struct PythonImageBuild {
  std::string id;
  bool built_base = false;   // debootstrap ran
  bool built_image = false;  // the final image was (re)built
};

// Builds what is stale (nothing when the final image's content label matches) and returns the final
// image's id. debootstrap needs root and reaches the mirror; nothing is pulled from a registry.
Result<PythonImageBuild> build_python_image(engine::Client& c, const PythonImageOptions& o,
                                            const std::function<void(std::string_view)>& progress = {});

}  // namespace forge::stack
