// Container endpoints: create, start, wait, stop, kill, remove, inspect, list, logs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/client.h"

namespace forge::engine {

struct Healthcheck {
  std::vector<std::string> test;  // {"CMD", …} | {"CMD-SHELL", "…"} | {"NONE"}
  Millis interval{0}, timeout{0}, start_period{0};
  int retries = 0;
};

struct Ulimit {
  std::string name;
  std::int64_t soft = 0, hard = 0;
  bool operator==(const Ulimit&) const = default;
};

// One HostConfig.Mounts entry of type volume: a named volume (`source`), or an anonymous one
// (`source` empty) made for this container with `driver` and `driver_options` — the local
// driver's tmpfs options give a size-capped workspace — and removed with it.
struct VolumeMount {
  std::string source;  // the volume's name; empty: a new anonymous volume
  std::string target;  // absolute path in the container
  bool read_only = false;
  bool no_copy = false;                               // never copy the image's content at `target` into the volume
  std::map<std::string, std::string> labels;          // a new volume's labels
  std::string driver;                                 // a new volume's driver; empty: the daemon's default
  std::map<std::string, std::string> driver_options;  // e.g. {type: tmpfs, device: tmpfs, o: size=2048m}
  bool operator==(const VolumeMount&) const = default;
};

// A mount as the runtime made it (inspect's top-level Mounts): what a container really got.
struct MountPoint {
  std::string type;  // volume | bind | tmpfs
  std::string name;  // volumes: the volume's name (anonymous ones get a random hex name)
  std::string source, destination, driver;
  bool rw = true;
};

// The HostConfig fields forgectl sets; inspect reads the same struct back, so the stack layer can
// compare what it asked for with what the runtime applied.
struct HostSpec {
  std::vector<std::string> cap_drop, cap_add, security_opt;
  std::int64_t pids_limit = 0;   // 0 = unlimited
  std::int64_t memory = 0;       // bytes; 0 = unlimited
  std::int64_t memory_swap = 0;  // bytes; equal to memory = no swap
  std::int64_t nano_cpus = 0;
  bool readonly_rootfs = false;
  std::map<std::string, std::string> tmpfs;  // mount point → options
  bool init = false;
  std::string network_mode;  // network name or id, "none", "bridge"
  std::vector<std::string> binds;
  std::vector<Ulimit> ulimits;
  std::vector<std::string> dns, dns_options, dns_search;
  std::vector<std::string> extra_hosts;
  std::vector<VolumeMount> mounts;
  // StorageOpt, e.g. {size: 2048m}: only overlay2 on xfs with pquota (and a few other drivers)
  // accepts it; elsewhere the daemon refuses the create.
  std::map<std::string, std::string> storage_opt;
  // The OCI runtime (a name the daemon's /info lists under Runtimes); empty: the daemon's default.
  // Inspect reads back the one the daemon recorded.
  std::string runtime;
};

struct ContainerSpec {
  std::string name;  // empty: the daemon picks one
  std::string image;
  std::optional<std::vector<std::string>> cmd, entrypoint;  // unset = the image's
  std::vector<std::string> env;                             // "K=V"
  std::string user, workdir, hostname;
  std::map<std::string, std::string> labels;
  std::optional<Healthcheck> healthcheck;
  std::string stop_signal;
  std::optional<int> stop_timeout;  // seconds
  bool open_stdin = false;
  // Anonymous volumes (Config.Volumes): writable through the archive API even on a read-only
  // root filesystem, and removed with the container.
  std::vector<std::string> volumes;
  HostSpec host;
  std::string network;               // the one network joined at create (API 1.41 takes one)
  std::vector<std::string> aliases;  // on that network
  std::string ipv4_address;          // a fixed address on that network (its subnet's), or the daemon's choice
};

struct CreatedContainer {
  std::string id;
  std::vector<std::string> warnings;
};
Result<CreatedContainer> create_container(Client& c, const ContainerSpec& spec);
// The JSON body create sends; exposed for golden tests.
std::string container_create_body(const ContainerSpec& spec);

Status start_container(Client& c, std::string_view id);  // already running (304) is success
Status stop_container(Client& c, std::string_view id, int timeout_s);  // already stopped (304) is success
Status kill_container(Client& c, std::string_view id, std::string_view signal = "SIGKILL");
// The cgroup freezer: a paused container keeps its memory and uses no CPU until unpaused.
Status pause_container(Client& c, std::string_view id);
Status unpause_container(Client& c, std::string_view id);

enum class WaitCondition { kNotRunning, kNextExit, kRemoved };
// Waits for the container to reach `cond` and returns its exit code; kTimeout after `timeout`.
Result<int> wait_container(Client& c, std::string_view id, WaitCondition cond, Millis timeout);

enum class RemoveMode { kNormal, kForce };
// Removes the container and its anonymous volumes; a missing container is success
// (teardown is idempotent), unless `missing_ok` is false.
Status remove_container(Client& c, std::string_view id, RemoveMode mode = RemoveMode::kForce, bool missing_ok = true);

struct ContainerState {
  std::string status;  // created | running | paused | restarting | removing | exited | dead
  bool running = false;
  bool oom_killed = false;
  int pid = 0;
  int exit_code = 0;
  std::string error;
  std::string health;  // "" (no healthcheck) | starting | healthy | unhealthy
  std::string started_at, finished_at;
};

struct EndpointInfo {
  std::string network_id;
  std::string ip_address;
  std::string gateway;
  std::vector<std::string> aliases;
};

struct ContainerInfo {
  std::string id;
  std::string name;   // without the leading '/'
  std::string image;  // the image id the container runs
  std::string config_image;
  ContainerState state;
  std::map<std::string, std::string> labels;
  std::vector<std::string> env;
  std::string user, workdir;
  HostSpec host;
  std::vector<MountPoint> mounts;
  std::map<std::string, EndpointInfo> networks;  // network name → endpoint
};
Result<ContainerInfo> inspect_container(Client& c, std::string_view id);
// The first mount at `destination`, or null.
const MountPoint* find_mount(const ContainerInfo& info, std::string_view destination);

// A container's disk use as the daemon computes it (inspect with size=1; it walks the writable
// layer, so it costs time proportional to the files there).
struct ContainerSize {
  std::int64_t rw = 0;       // SizeRw: bytes in the writable layer (volumes and tmpfs not counted)
  std::int64_t root_fs = 0;  // SizeRootFs: the image's and the writable layer's together
};
Result<ContainerSize> container_size(Client& c, std::string_view id);

struct ContainerSummary {
  std::string id;
  std::vector<std::string> names;
  std::string image;
  std::string state;   // "running"
  std::string status;  // "Up 3 minutes (healthy)"
  std::int64_t created = 0;
  std::map<std::string, std::string> labels;
  std::vector<std::string> networks;  // the networks it is attached to ("none" for NetworkMode none)
};
// All containers (running or not) matching `filters`.
Result<std::vector<ContainerSummary>> list_containers(Client& c, const Filters& filters = {});

struct Logs {
  std::string out, err;
};
// The container's log: both streams, or stderr alone (`with_stdout` false); the last `tail` lines.
Result<Logs> container_logs(Client& c, std::string_view id, std::optional<int> tail = std::nullopt,
                            bool with_stdout = true);

}  // namespace forge::engine
