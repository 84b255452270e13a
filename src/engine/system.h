// System endpoints: ping, version, info, events.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/client.h"

namespace forge::engine {

struct PingInfo {
  std::string api_version;  // the daemon's maximum
  std::string os;
  std::string server;       // "Docker/20.10.24+dfsg1 (linux)"
};
Result<PingInfo> ping(Client& c);

struct VersionInfo {
  std::string version;        // "20.10.24+dfsg1"
  std::string api_version;
  std::string min_api_version;
  std::string os, arch, kernel_version;
  std::map<std::string, std::string> components;  // "containerd" → "1.6.20~ds1"
};
Result<VersionInfo> version(Client& c);

struct AddressPool {
  std::string base;  // "172.17.0.0/16"
  int size = 0;      // prefix length of each network cut from it
};

// One entry of /info's Runtimes: an OCI runtime registered with the daemon (daemon.json "runtimes").
struct RuntimeInfo {
  std::string path;
  std::vector<std::string> args;  // runtimeArgs
};

struct SystemInfo {
  std::string server_version;
  std::string storage_driver;
  std::map<std::string, std::string> driver_status;  // DriverStatus pairs: "Backing Filesystem" → "extfs"
  std::string cgroup_driver;
  std::string cgroup_version;  // "1" | "2"
  std::string kernel_version, operating_system;
  std::string docker_root_dir;
  int ncpu = 0;
  std::int64_t mem_total = 0;
  int containers = 0, containers_running = 0, images = 0;
  std::vector<std::string> security_options;
  std::vector<AddressPool> default_address_pools;  // empty when the daemon uses its built-in pools
  std::vector<std::string> warnings;
  std::map<std::string, RuntimeInfo> runtimes;  // name → how it is registered
  std::string default_runtime;                  // "runc" unless daemon.json says otherwise
};
Result<SystemInfo> info(Client& c);

struct Event {
  std::string type;    // "container", "network", "image", …
  std::string action;  // "start", "die", "exec_start: sh -c …"
  std::string id;      // actor id
  std::map<std::string, std::string> attributes;  // name, image, exitCode and the container's labels
  std::int64_t time_nano = 0;
};

struct EventQuery {
  Filters filters;
  std::optional<std::int64_t> since, until;  // unix seconds; without `until` the stream never ends
  Millis timeout{0};                         // whole stream; 0 = until `on_event` says stop
};
// Streams events to `on_event` until it returns false, `until` is reached or the timeout passes
// (a timeout is not an error here: the caller asked for a bounded watch).
Status events(Client& c, const EventQuery& q, const std::function<bool(const Event&)>& on_event);
// Splits a chunk stream into lines and parses each as an event; exposed for tests.
class EventParser {
 public:
  // Returns false if a handler asked to stop.
  Result<bool> feed(std::string_view bytes, const std::function<bool(const Event&)>& on_event);

 private:
  std::string pending_;
};

}  // namespace forge::engine
