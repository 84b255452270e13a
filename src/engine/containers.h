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
  std::map<std::string, EndpointInfo> networks;  // network name → endpoint
};
Result<ContainerInfo> inspect_container(Client& c, std::string_view id);

struct ContainerSummary {
  std::string id;
  std::vector<std::string> names;
  std::string image;
  std::string state;   // "running"
  std::string status;  // "Up 3 minutes (healthy)"
  std::int64_t created = 0;
  std::map<std::string, std::string> labels;
};
// All containers (running or not) matching `filters`.
Result<std::vector<ContainerSummary>> list_containers(Client& c, const Filters& filters = {});

struct Logs {
  std::string out, err;
};
Result<Logs> container_logs(Client& c, std::string_view id, std::optional<int> tail = std::nullopt);

}  // namespace forge::engine
