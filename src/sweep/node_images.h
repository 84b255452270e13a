// Images on the node a sweep runs on, built where missing under a lock per engine on this host:
// shards of a Slurm array that land on one node build each image once (docs/scale.md).
#pragma once

#include <string>
#include <vector>

#include "core/file_lock.h"
#include "core/host_settings.h"
#include "core/log.h"
#include "core/slots.h"
#include "manifest/task_config.h"
#include "sweep/hosts.h"

namespace forge::sweep {

// The lock file for building images on the engine at `address`:
// <state_dir>/images-<12 hex of the address>.lock. The state directory is node-local (/run).
std::string image_lock_path(const HostSettings& host, const std::string& address);

// Holds the image lock of engine `address` until the FileLock dies; says so in the log when it
// has to wait for another process (another shard on this node building the same images).
Result<FileLock> lock_engine_images(const HostSettings& host, const std::string& address, Logger& log);

// This binary's services image (json-db, mock-web) on every engine, built where missing: only
// for a plan whose tasks run a built-in service (its tag hashes the binary, a second or more).
Status ensure_services_image(HostPool& pool, const HostSettings& host, Slots& builds, Logger& log);

// The browser image (stack/browser_image.h) on every engine, built where missing or stale: only
// for a plan whose tasks enable the `browser` tool.
Status ensure_browser_image(HostPool& pool, const HostSettings& host, Slots& builds, Logger& log);

// `run --build-images`, on every engine: forgectl's Python image where a task runs on it (what
// `forgectl images build` makes; debootstrap from host.debian_mirror, else deb.debian.org, on a
// node that lacks it; a stale one is rebuilt).
Status ensure_python_image(HostPool& pool, const HostSettings& host, Slots& builds, Logger& log);

// `run --build-images`, on every engine: each task's compose `build:` images, as `up` would build
// them (content-addressed forgectl-task/… tags, a build skipped when the same content is there).
Status build_task_images(HostPool& pool, const std::vector<manifest::TaskConfig>& tasks, const HostSettings& host,
                         Slots& builds, Logger& log);

}  // namespace forge::sweep
