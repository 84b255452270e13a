// The runner's workspace and disks: what an image's own workdir holds (a tmpfs workspace hides
// it and Docker's copy-up does not survive into tmpfs), and the writable-layer use the trial
// layer watches where the storage driver cannot cap it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/client.h"

namespace forge::stack {

struct UpResult;

// The uid and gid files put into the workspace should belong to (TarEntry uid/gid), so the agent
// can change them: the runner's numeric user; nullopt when it is a name or the image's own user,
// which only the running runner can tell (the trial asks it: trial::runner_ids).
struct WorkspaceOwner {
  unsigned uid = 0, gid = 0;
};
std::optional<WorkspaceOwner> workspace_owner(const UpResult& up);

// An image's workdir: its owner and mode (for the workspace tmpfs's root) and its content.
struct WorkdirSeed {
  bool exists = false;
  unsigned uid = 0, gid = 0, mode = 0755;
  std::string tar;  // GET archive's entries ("<base>/…"); empty when the directory is empty or missing
};
// Reads `workdir` out of `image` through a container that is created, never started, and
// removed (it carries `labels`, so a teardown by label also catches it). Cached per image id
// in this process for small contents. At most 1 GiB.
Result<WorkdirSeed> image_workdir(engine::Client& c, const std::string& image, const std::string& workdir,
                                  const std::map<std::string, std::string>& labels);
// The workspace an image asks for: its Config.WorkingDir, normalised; "" when it sets none, or
// "/" (the whole filesystem cannot be the workspace), or a relative path.
Result<std::string> image_working_dir(engine::Client& c, const std::string& image);
// Puts the seed's content into the running `container`'s `workdir` (no-op when empty).
Status seed_workspace(engine::Client& c, const std::string& container, const std::string& workdir,
                      const WorkdirSeed& seed);

// A container's writable-layer size in bytes (SizeRw): what the agent wrote outside its volumes
// and tmpfs mounts. The daemon walks the layer to compute it, so poll it, don't spin on it.
Result<std::int64_t> disk_usage(engine::Client& c, const std::string& container);

// Containers of a stack whose writable layer has a cap the daemon does not enforce (no
// StorageOpt on this storage driver): the trial layer polls disk_usage for each and ends the
// trial (as the agent's doing) once `limit` is passed.
struct DiskWatch {
  std::string key;         // the plan key: "runner" or the service name
  std::string container;   // its id
  std::int64_t limit = 0;  // bytes
};
std::vector<DiskWatch> disk_watches(const UpResult& up);

}  // namespace forge::stack
