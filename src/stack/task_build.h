// Images built from a task's compose `build:`: tagged by their content in forgectl's own
// namespace (forgectl-task/<service>:<16 hex>), never under the task's `image:` name, so a task
// cannot replace an image another task (or forgectl) runs; built under limits.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/slots.h"
#include "engine/client.h"
#include "engine/images.h"
#include "manifest/compose.h"
#include "stack/local_images.h"

namespace forge::stack {

inline constexpr const char* kTaskImageRepo = "forgectl-task";
inline constexpr const char* kTaskBuildValue = "task-build";         // io.forgectl.image on such images
// kContentLabel (local_images.h) on such images: their content hash.

// Limits on a task build's RUN steps (docs/compose.md#builds).
struct TaskBuildLimits {
  std::int64_t memory = 2LL << 30;  // and memswap the same: no swap
  double cpus = 1.0;
  std::int64_t nproc = 4096;  // RLIMIT_NPROC of the build's processes
  bool network = false;       // true only under full_internet
};

// The build context as a tar of sorted entries (stable bytes) and the hex sha256 over it, the
// Dockerfile's path and the build args: the same inputs give the same tag.
struct TaskBuildContext {
  std::string tar;
  std::string hash;
};
Result<TaskBuildContext> task_build_context(const manifest::ComposeBuild& build);

// "forgectl-task/<service>:<first 16 hex of hash>"; the service name made a valid repository.
std::string task_image_tag(std::string_view service, std::string_view hash);

// The build parameters sent for a task build.
engine::BuildSpec task_build_spec(TaskBuildContext ctx, const manifest::ComposeBuild& build,
                                  const TaskBuildLimits& limits);

// The images a Dockerfile's FROM lines build on, in order: stage names of earlier FROM ... AS
// lines and `scratch` left out; a reference with a variable (`FROM $BASE`) is returned as written.
std::vector<std::string> dockerfile_bases(std::string_view dockerfile);

// Builds `service`'s image unless forgectl built the same content before (the tag exists with
// io.forgectl.image=task-build and the same io.forgectl.content), and returns the tag. A tag
// that exists without those labels is refused, never overwritten. `slots` bounds builds at once.
// Every base image must already be on the daemon (the builder would pull a missing one): else
// kNotFound naming it; a base given by a variable is refused (forgectl cannot check it).
Result<std::string> ensure_task_image(engine::Client& c, std::string_view service, const manifest::ComposeBuild& build,
                                      const TaskBuildLimits& limits, Slots* slots,
                                      const std::function<void(std::string_view)>& progress = {});

}  // namespace forge::stack
