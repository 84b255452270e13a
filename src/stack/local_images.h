// Images forgectl builds itself from the host's Debian packages: no registry is ever needed.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/client.h"

namespace forge::stack {

// Tags of the local images. Image labels use their own key (io.forgectl.image), never the stack
// keys: containers inherit image labels, and teardown by label must not match foreign containers.
inline constexpr const char* kRunnerImage = "forgectl/runner:local";
inline constexpr const char* kImageLabel = "io.forgectl.image";

struct ImageSources {
  std::string busybox = "/bin/busybox";  // Debian's busybox-static
  std::string exec_helper;               // forgectl-exec, built with forgectl (static)
};

// Finds forgectl-exec: $FORGECTL_EXEC_HELPER, else beside the running binary (installed, or in the
// build tree), else beside `self_dir`.
Result<std::string> find_exec_helper(const std::string& self_dir);

// The runner image: FROM scratch, busybox and its applets in /bin, the exec helper at
// /.forgectl/exec, /etc/passwd with root and nobody, /tmp (1777) and /work.
Result<std::string> runner_build_context(const ImageSources& src);
// Builds the runner image and returns its id.
Result<std::string> build_runner_image(engine::Client& c, const ImageSources& src,
                                       const std::function<void(std::string_view)>& progress = {});

}  // namespace forge::stack
