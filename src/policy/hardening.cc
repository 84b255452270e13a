// Resource and privilege policy per role, and verification.
#include "policy/hardening.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>

namespace forge::policy {

const char* role_name(Role r) {
  switch (r) {
    case Role::kRunner: return "runner";
    case Role::kService: return "service";
    case Role::kProxy: return "proxy";
    case Role::kResolver: return "resolver";
  }
  return "service";
}

RoleDefaults role_defaults(Role r) {
  switch (r) {
    case Role::kRunner: return {2LL << 30, 1.0, 512};
    case Role::kService: return {1LL << 30, 1.0, 256};
    case Role::kProxy: return {128LL << 20, 0.5, 64};
    case Role::kResolver: return {64LL << 20, 0.25, 16};
  }
  return {1LL << 30, 1.0, 256};
}

std::string normalise_capability(std::string_view cap) {
  std::string s;
  for (char c : cap) s += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (s.rfind("CAP_", 0) == 0) s.erase(0, 4);
  return s;
}

static std::int64_t nanos_of(double cpus) { return static_cast<std::int64_t>(std::llround(cpus * 1e9)); }

static void apply_limits(Hardening& h, const manifest::Resources& r, RoleDefaults d) {
  h.memory = r.memory > 0 ? r.memory : d.memory;
  h.memory_swap = h.memory;
  h.nano_cpus = nanos_of(r.cpus > 0 ? r.cpus : d.cpus);
  h.pids_limit = r.pids_limit > 0 ? r.pids_limit : d.pids_limit;
}

std::string tmpfs_volume_options(std::int64_t mib, unsigned uid, unsigned gid, unsigned mode) {
  char m[8];
  std::snprintf(m, sizeof m, "%04o", mode & 07777);
  return "size=" + std::to_string(mib) + "m,uid=" + std::to_string(uid) + ",gid=" + std::to_string(gid) + ",mode=" + m;
}

MountSpec* find_mount(Hardening& h, std::string_view target) {
  for (auto& m : h.mounts)
    if (m.target == target) return &m;
  return nullptr;
}

Hardening runner_hardening(const manifest::RunnerSpec& runner, bool own_image) {
  Hardening h;
  h.cap_drop = {"ALL"};
  h.cap_add = {"NET_BIND_SERVICE"};
  apply_limits(h, runner.resources, role_defaults(Role::kRunner));
  h.user = !runner.user.empty() ? runner.user : own_image ? kAgentUser : "";
  const std::int64_t work_mb = runner.disk_mb > 0 ? runner.disk_mb : kDefaultWorkspaceMb;
  const std::int64_t tmp_mb = runner.tmp_mb > 0 ? runner.tmp_mb : kDefaultTmpMb;
  // exec: Docker mounts tmpfs noexec by default, and /tmp was executable when it was on the root.
  h.tmpfs["/tmp"] = "rw,exec,nosuid,nodev,size=" + std::to_string(tmp_mb) + "m,mode=1777";
  std::int64_t tmpfs_mb = work_mb + tmp_mb;
  if (own_image) {
    h.readonly_rootfs = true;  // no unbounded writable layer: every writable place is capped
    if (h.user == kAgentUser) {
      h.tmpfs[kAgentHome] =
          "rw,exec,nosuid,nodev,size=" + std::to_string(kAgentHomeMb) + "m,uid=1000,gid=1000,mode=0700";
      tmpfs_mb += kAgentHomeMb;
    }
  } else {
    h.writable_layer_limit = work_mb << 20;  // the image's root stays writable: StorageOpt or the watch
  }
  h.memory += tmpfs_mb << 20;
  h.memory_swap = h.memory;
  return h;
}

Hardening service_hardening(const manifest::ComposeService& svc, const manifest::ServiceIsolation* iso) {
  Hardening h;
  h.cap_drop = {"ALL"};
  std::set<std::string> add;
  for (const auto& c : svc.cap_add) add.insert(normalise_capability(c));
  h.cap_add.assign(add.begin(), add.end());
  manifest::Resources r{svc.mem_limit, svc.cpus, svc.pids_limit};
  if (iso) {
    // Isolation options only tighten: the smaller of the two wins.
    auto tighter = [](auto a, auto b) { return a > 0 && b > 0 ? std::min(a, b) : (a > 0 ? a : b); };
    r.memory = tighter(r.memory, iso->resources.memory);
    r.cpus = tighter(r.cpus, iso->resources.cpus);
    r.pids_limit = tighter(r.pids_limit, iso->resources.pids_limit);
  }
  apply_limits(h, r, role_defaults(Role::kService));
  h.readonly_rootfs = svc.read_only || (iso && iso->read_only.value_or(false));
  h.tmpfs = svc.tmpfs;
  if (!h.readonly_rootfs)
    h.writable_layer_limit = (iso && iso->disk_mb > 0 ? iso->disk_mb : kDefaultServiceDiskMb) << 20;
  h.user = svc.user;
  return h;
}

Hardening proxy_hardening() {
  Hardening h;
  h.cap_drop = {"ALL"};
  apply_limits(h, {}, role_defaults(Role::kProxy));
  h.readonly_rootfs = true;
  h.init = false;  // squid is PID 1 and gets signals directly (shutdown_lifetime 1 s)
  h.user = "13:13";
  return h;
}

Hardening resolver_hardening() {
  Hardening h;
  h.cap_drop = {"ALL"};  // port 53 needs no capability: Docker sets ip_unprivileged_port_start=0
  apply_limits(h, {}, role_defaults(Role::kResolver));
  h.readonly_rootfs = true;
  h.user = "65534:65534";
  return h;
}

static std::string list(const std::vector<std::string>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s + "]";
}

static std::vector<std::string> cap_set(const std::vector<std::string>& v) {
  std::set<std::string> s;
  for (const auto& c : v) s.insert(normalise_capability(c));
  return {s.begin(), s.end()};
}

std::vector<std::string> hardening_mismatches(const Hardening& w, const Hardening& a) {
  std::vector<std::string> out;
  auto num = [&](const char* name, std::int64_t want, std::int64_t got) {
    if (want != got) out.push_back(std::string(name) + ": wanted " + std::to_string(want) + ", applied " + std::to_string(got));
  };
  auto flag = [&](const char* name, bool want, bool got) {
    if (want != got) out.push_back(std::string(name) + ": wanted " + (want ? "true" : "false") + ", applied " + (got ? "true" : "false"));
  };
  if (cap_set(w.cap_drop) != cap_set(a.cap_drop)) out.push_back("CapDrop: wanted " + list(w.cap_drop) + ", applied " + list(a.cap_drop));
  if (cap_set(w.cap_add) != cap_set(a.cap_add)) out.push_back("CapAdd: wanted " + list(w.cap_add) + ", applied " + list(a.cap_add));
  flag("SecurityOpt no-new-privileges", w.no_new_privileges, a.no_new_privileges);
  num("PidsLimit", w.pids_limit, a.pids_limit);
  num("Memory", w.memory, a.memory);
  num("MemorySwap", w.memory_swap, a.memory_swap);
  num("NanoCpus", w.nano_cpus, a.nano_cpus);
  flag("ReadonlyRootfs", w.readonly_rootfs, a.readonly_rootfs);
  flag("Init", w.init, a.init);
  for (const auto& [path, opts] : w.tmpfs) {
    auto it = a.tmpfs.find(path);
    if (it == a.tmpfs.end() || it->second != opts) out.push_back("Tmpfs " + path + ": wanted '" + opts + "', not applied");
  }
  if (!w.user.empty() && w.user != a.user) out.push_back("User: wanted '" + w.user + "', applied '" + a.user + "'");
  for (const auto& m : w.mounts) {
    auto it = std::find_if(a.mounts.begin(), a.mounts.end(), [&](const MountSpec& x) { return x.target == m.target; });
    std::string what =
        "Mount " + m.target + ": wanted " + (m.volume.empty() ? "an anonymous" : "volume '" + m.volume + "'") +
        (m.read_only ? " read-only" : "") + (m.tmpfs_options.empty() ? "" : " tmpfs (" + m.tmpfs_options + ")");
    if (it == a.mounts.end()) {
      out.push_back(what + ", not mounted");
    } else if (it->read_only != m.read_only || (!m.volume.empty() && it->volume != m.volume) ||
               it->tmpfs_options != m.tmpfs_options) {
      out.push_back(what + ", applied " + (it->volume.empty() ? "an anonymous volume" : "volume '" + it->volume + "'") +
                    (it->read_only ? " read-only" : " writable") +
                    (it->tmpfs_options.empty() ? "" : " tmpfs (" + it->tmpfs_options + ")"));
    }
  }
  if (w.storage_opt) num("StorageOpt size", w.writable_layer_limit, a.storage_opt ? a.writable_layer_limit : 0);
  // The runtime decides what enforces the rest (runsc: gVisor's kernel, not the host's seccomp).
  if (!w.runtime.empty() && w.runtime != a.runtime)
    out.push_back("Runtime: wanted '" + w.runtime + "', applied '" + (a.runtime.empty() ? "the default" : a.runtime) +
                  "'");
  return out;
}

std::vector<std::string> fit_to_storage(Hardening& h, bool supported) {
  h.storage_opt = supported && h.writable_layer_limit > 0;
  if (h.writable_layer_limit > 0 && !supported)
    return {"the storage driver cannot cap the writable layer (StorageOpt size); it is watched instead"};
  return {};
}

std::vector<std::string> fit_to_host(Hardening& h, int host_cpus) {
  std::vector<std::string> notes;
  if (host_cpus > 0 && h.nano_cpus > static_cast<std::int64_t>(host_cpus) * 1000000000) {
    notes.push_back("cpus lowered from " + std::to_string(h.nano_cpus / 1e9) + " to " + std::to_string(host_cpus) +
                    ", the host's count");
    h.nano_cpus = static_cast<std::int64_t>(host_cpus) * 1000000000;
  }
  return notes;
}

}  // namespace forge::policy
