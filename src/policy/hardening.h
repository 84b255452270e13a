// Resource and privilege policy per role, and the check that the runtime applied it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "manifest/environment.h"

namespace forge::policy {

// The agent's unprivileged uid and gid in forgectl's runner image (user `agent`).
inline constexpr const char* kAgentUser = "1000:1000";
inline constexpr unsigned kAgentUid = 1000, kAgentGid = 1000;
inline constexpr const char* kAgentHome = "/home/agent";

enum class Role { kRunner, kService, kProxy, kResolver };
const char* role_name(Role r);  // "runner" | "service" | "proxy" | "resolver"

// A volume mount forgectl asks for and checks the runtime made: a named volume (forgectl's
// helper, read-only), or an anonymous one made for the container and removed with it — backed
// by a size-capped tmpfs when `tmpfs_options` is set, which is how a disk gets a limit on
// storage drivers that cannot enforce StorageOpt size (overlay2 on ext4).
struct MountSpec {
  std::string target;
  std::string volume;  // a named volume; empty: anonymous
  bool read_only = false;
  // The local driver's tmpfs `o=` for an anonymous volume ("size=2048m,uid=1000,gid=1000,mode=0755");
  // empty: a plain volume on the daemon's disk.
  std::string tmpfs_options;
  bool operator==(const MountSpec&) const = default;
};

// What forgectl asks of every container, and reads back after create to verify.
struct Hardening {
  std::vector<std::string> cap_drop, cap_add;  // normalised: upper-case, no CAP_ prefix
  bool no_new_privileges = true;
  std::int64_t pids_limit = 0;
  std::int64_t memory = 0;       // bytes
  std::int64_t memory_swap = 0;  // equal to memory: no swap
  std::int64_t nano_cpus = 0;
  bool readonly_rootfs = false;
  std::map<std::string, std::string> tmpfs;
  bool init = true;
  std::string user;  // "" = the image's (checked only when set)
  std::vector<MountSpec> mounts;
  // A cap on the writable layer (bytes; 0: none wanted). Applied as StorageOpt size where the
  // storage driver can (`storage_opt`, see fit_to_storage); elsewhere it is what the trial layer
  // watches with stack::disk_usage. Zero for read-only roots: nothing can be written there.
  std::int64_t writable_layer_limit = 0;
  bool storage_opt = false;
  // The OCI runtime, as /info names it ("runsc"); empty: the daemon's default, not checked.
  std::string runtime;
};

// The size caps forgectl gives when the manifest sets none (MiB).
inline constexpr std::int64_t kDefaultWorkspaceMb = 2048;    // runner.disk_mb
inline constexpr std::int64_t kDefaultTmpMb = 512;           // runner.tmp_mb
inline constexpr std::int64_t kDefaultServiceDiskMb = 2048;  // services.<name>.disk_mb
inline constexpr std::int64_t kAgentHomeMb = 64;             // /home/agent in forgectl's runner
inline constexpr std::int64_t kTaskFilesMb = 256;            // an MCP server's files

// The local volume driver's tmpfs options for a size-capped volume whose root is uid:gid, mode.
std::string tmpfs_volume_options(std::int64_t mib, unsigned uid, unsigned gid, unsigned mode);
// The mount at `target`, or null.
MountSpec* find_mount(Hardening& h, std::string_view target);

// Defaults when the manifest sets nothing.
struct RoleDefaults {
  std::int64_t memory;
  double cpus;
  std::int64_t pids_limit;
};
RoleDefaults role_defaults(Role r);

// The runner: every capability dropped but NET_BIND_SERVICE, no-new-privileges, limits, init,
// /tmp a size-capped tmpfs. In forgectl's own runner image (`own_image`) also a read-only root,
// the agent uid 1000:1000 unless runner.user says otherwise, and its home a small tmpfs. The
// memory limit includes every tmpfs cap: tmpfs pages are charged to the container's memory
// cgroup, and a full disk must be ENOSPC, not an OOM kill. (Mounts are the plan's: topology.cc.)
Hardening runner_hardening(const manifest::RunnerSpec& runner, bool own_image);
// The runner's workspace cap in bytes (runner.disk_mb, else kDefaultWorkspaceMb).
inline std::uint64_t workspace_limit_bytes(const manifest::RunnerSpec& runner) {
  return static_cast<std::uint64_t>(runner.disk_mb > 0 ? runner.disk_mb : kDefaultWorkspaceMb) << 20;
}
// A task service: drop ALL unless it declares cap_add; limits from the compose file, tightened by
// the manifest's isolation options, else the defaults.
Hardening service_hardening(const manifest::ComposeService& svc, const manifest::ServiceIsolation* iso);
// The squid sidecar: unprivileged user, nothing at all added, read-only root.
Hardening proxy_hardening();
// The trial's resolver (forgectl serve dns): nobody, nothing added, read-only root, small limits.
Hardening resolver_hardening();

// "CAP_net_bind_service" → "NET_BIND_SERVICE".
std::string normalise_capability(std::string_view cap);

// Every field of `wanted` that `applied` (read back from the daemon) does not match, named:
// "CapAdd: wanted [NET_BIND_SERVICE], applied []". Empty when all is applied.
std::vector<std::string> hardening_mismatches(const Hardening& wanted, const Hardening& applied);

// Applies the writable-layer cap as StorageOpt size when the daemon's storage driver supports it;
// returns a note when it cannot (the cap is then the trial layer's to watch).
std::vector<std::string> fit_to_storage(Hardening& h, bool storage_opt_supported);

// Caps each resource at what the host can give (NanoCpus above the host's CPUs is refused by the
// daemon): returns a note for each value lowered.
std::vector<std::string> fit_to_host(Hardening& h, int host_cpus);

}  // namespace forge::policy
