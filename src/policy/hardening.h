// Resource and privilege policy per role, and the check that the runtime applied it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "manifest/environment.h"

namespace forge::policy {

enum class Role { kRunner, kService, kProxy };
const char* role_name(Role r);  // "runner" | "service" | "proxy"

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
};

// Defaults when the manifest sets nothing.
struct RoleDefaults {
  std::int64_t memory;
  double cpus;
  std::int64_t pids_limit;
};
RoleDefaults role_defaults(Role r);

// The runner: every capability dropped but NET_BIND_SERVICE, no-new-privileges, limits, init.
Hardening runner_hardening(const manifest::RunnerSpec& runner);
// A task service: drop ALL unless it declares cap_add; limits from the compose file, tightened by
// the manifest's isolation options, else the defaults.
Hardening service_hardening(const manifest::ComposeService& svc, const manifest::ServiceIsolation* iso);
// The squid sidecar: unprivileged user, nothing at all added, read-only root.
Hardening proxy_hardening();

// "CAP_net_bind_service" → "NET_BIND_SERVICE".
std::string normalise_capability(std::string_view cap);

// Every field of `wanted` that `applied` (read back from the daemon) does not match, named:
// "CapAdd: wanted [NET_BIND_SERVICE], applied []". Empty when all is applied.
std::vector<std::string> hardening_mismatches(const Hardening& wanted, const Hardening& applied);

// Caps each resource at what the host can give (NanoCpus above the host's CPUs is refused by the
// daemon): returns a note for each value lowered.
std::vector<std::string> fit_to_host(Hardening& h, int host_cpus);

}  // namespace forge::policy
