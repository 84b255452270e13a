// One compose service: the supported keys, and specific refusals for the dangerous ones.
#include "manifest/compose_service.h"

#include <algorithm>
#include <map>
#include <set>

#include "manifest/scalar_parse.h"

namespace forge::manifest {

namespace {

const std::vector<std::string> kServiceKeys = {
    "image",   "build",      "command", "entrypoint", "environment", "env_file",   "working_dir",
    "user",    "healthcheck", "depends_on", "networks", "tmpfs",     "read_only",  "cap_add",
    "cap_drop", "mem_limit", "cpus",    "pids_limit", "labels",      "expose"};

constexpr std::string_view kNamesHint = "names are forgectl's; services reach each other by service name or network alias";
constexpr std::string_view kNamespaceHint = "every container gets its own namespaces; remove it";
constexpr std::string_view kResourcesHint = "use mem_limit, cpus and pids_limit";
constexpr std::string_view kDnsHint = "forgectl owns name resolution on the task network; use network aliases";

// Keys compose knows and forgectl refuses, with what to do instead.
const std::map<std::string_view, std::string_view> kRefused = {
    {"ports", "services are reached by name on the task network; remove ports"},
    {"privileged", "forgectl never runs privileged containers"},
    {"network_mode", "forgectl owns networking; use networks"},
    {"volumes", "host volumes are not allowed; use tmpfs, or build the files into the image"},
    {"volumes_from", "host volumes are not allowed; use tmpfs, or build the files into the image"},
    {"devices", "host devices never enter a sandbox"},
    {"device_cgroup_rules", "host devices never enter a sandbox"},
    {"gpus", "host devices never enter a sandbox"},
    {"pid", kNamespaceHint},
    {"ipc", kNamespaceHint},
    {"uts", kNamespaceHint},
    {"userns_mode", kNamespaceHint},
    {"cgroup", kNamespaceHint},
    {"cgroup_parent", "forgectl places containers in cgroups itself"},
    {"security_opt", "forgectl sets the security options (no-new-privileges, the default seccomp and AppArmor profiles)"},
    {"runtime", "forgectl chooses the container runtime"},
    {"isolation", "forgectl chooses the container runtime"},
    {"restart", "forgectl manages lifecycles; remove restart"},
    {"container_name", kNamesHint},
    {"hostname", kNamesHint},
    {"domainname", kNamesHint},
    {"mac_address", "addresses are forgectl's"},
    {"extra_hosts", kDnsHint},
    {"dns", kDnsHint},
    {"dns_search", kDnsHint},
    {"dns_opt", kDnsHint},
    {"links", "services on a shared network reach each other by name; use depends_on for ordering"},
    {"external_links", "a task's services cannot reach containers outside its stack"},
    {"sysctls", "kernel parameters are not set from task files"},
    {"ulimits", "use pids_limit and mem_limit"},
    {"deploy", kResourcesHint},
    {"mem_reservation", kResourcesHint},
    {"memswap_limit", kResourcesHint},
    {"mem_swappiness", kResourcesHint},
    {"oom_kill_disable", kResourcesHint},
    {"oom_score_adj", kResourcesHint},
    {"cpu_shares", kResourcesHint},
    {"cpu_quota", kResourcesHint},
    {"cpu_period", kResourcesHint},
    {"cpuset", kResourcesHint},
    {"cpu_count", kResourcesHint},
    {"cpu_percent", kResourcesHint},
    {"blkio_config", kResourcesHint},
    {"shm_size", "use tmpfs"},
    {"profiles", "every service in the file is started; remove profiles"},
    {"scale", "each service runs once per trial"},
    {"secrets", "secrets never enter containers; LLM calls run on the host"},
    {"configs", "build the files into the image"},
    {"init", "forgectl runs every container with an init"},
    {"logging", "forgectl collects every container's logs itself"},
    {"group_add", "use user: \"uid:gid\""},
    {"stop_signal", "forgectl manages lifecycles"},
    {"stop_grace_period", "forgectl manages lifecycles"},
    {"extends", "write the service out in full"},
    {"pull_policy", "images are never pulled; build them locally"},
    {"platform", "services run on the host's platform"},
    {"stdin_open", "services run detached"},
    {"tty", "services run detached"},
};

// Capabilities a service may add back: the harmless part of Docker's default set.
const std::set<std::string, std::less<>> kAllowedCaps = {
    "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SETFCAP", "NET_BIND_SERVICE",
    "SYS_CHROOT", "AUDIT_WRITE"};

// Why the well-known dangerous ones are refused.
const std::map<std::string_view, std::string_view> kDangerousCaps = {
    {"ALL", "ALL would restore every capability, SYS_ADMIN included"},
    {"SYS_ADMIN", "SYS_ADMIN is close to root on the host kernel (mounts, namespaces, BPF)"},
    {"NET_ADMIN", "NET_ADMIN would let the service reconfigure the task network and its firewall"},
    {"NET_RAW", "NET_RAW allows spoofed packets on the task network"},
    {"SYS_PTRACE", "SYS_PTRACE would let the service inspect and alter other processes"},
    {"SYS_MODULE", "SYS_MODULE loads kernel modules into the host kernel"},
    {"DAC_READ_SEARCH", "DAC_READ_SEARCH bypasses read checks and enables open_by_handle_at escapes"},
    {"SYS_RAWIO", "SYS_RAWIO gives raw access to host I/O ports and memory"},
    {"SYS_BOOT", "SYS_BOOT can reboot the host"},
    {"SYS_TIME", "SYS_TIME sets the host's clock"},
    {"MKNOD", "MKNOD creates device nodes"},
    {"BPF", "BPF loads programs into the host kernel"},
    {"PERFMON", "PERFMON exposes host kernel performance data"},
    {"MAC_ADMIN", "MAC_ADMIN changes the host's mandatory access control"},
    {"MAC_OVERRIDE", "MAC_OVERRIDE bypasses mandatory access control"},
};

const std::set<std::string, std::less<>> kAllCaps = {
    "AUDIT_CONTROL", "AUDIT_READ", "AUDIT_WRITE", "BLOCK_SUSPEND", "BPF", "CHECKPOINT_RESTORE", "CHOWN",
    "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "IPC_LOCK", "IPC_OWNER", "KILL", "LEASE",
    "LINUX_IMMUTABLE", "MAC_ADMIN", "MAC_OVERRIDE", "MKNOD", "NET_ADMIN", "NET_BIND_SERVICE", "NET_BROADCAST",
    "NET_RAW", "PERFMON", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYSLOG", "SYS_ADMIN", "SYS_BOOT",
    "SYS_CHROOT", "SYS_MODULE", "SYS_NICE", "SYS_PACCT", "SYS_PTRACE", "SYS_RAWIO", "SYS_RESOURCE", "SYS_TIME",
    "SYS_TTY_CONFIG", "WAKE_ALARM", "ALL"};

// Docker refuses memory limits below 6 MiB; say so here rather than at container create.
constexpr std::int64_t kMinMemory = 6 * 1024 * 1024;

std::string allowed_caps_list() {
  std::string out;
  for (const auto& c : kAllowedCaps) out += (out.empty() ? "" : ", ") + c;
  return out;
}

// "cap_net_raw" → "NET_RAW", as Docker accepts either form.
std::string normalise_cap(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (s.rfind("CAP_", 0) == 0) s.erase(0, 4);
  return s;
}

std::vector<std::string> parse_caps(YamlReader& r, const Field& f, std::string_view what, bool adding) {
  std::vector<std::string> out;
  for (const auto& item : r.sequence(f, what)) {
    auto s = r.string(item, what);
    if (!s) continue;
    std::string cap = normalise_cap(*s);
    if (!kAllCaps.count(cap)) {
      r.error(item, prefix(what) + "'" + *s + "' in '" + f.key + "' is not a Linux capability");
    } else if (adding && !kAllowedCaps.count(cap)) {
      auto it = kDangerousCaps.find(cap);
      std::string why = it != kDangerousCaps.end() ? std::string(it->second) + "; " : "";
      r.error(item, prefix(what) + "cap_add '" + cap + "' is not allowed",
              why + "a service may add only " + allowed_caps_list());
    } else if (std::find(out.begin(), out.end(), cap) == out.end()) {
      out.push_back(cap);
    }
  }
  return out;
}

std::optional<std::vector<std::string>> parse_command(YamlReader& r, const Field& f, std::string_view what) {
  if (f.node.IsScalar()) {
    auto s = r.string(f, what);
    if (!s) return std::nullopt;
    auto words = shell_split(*s);
    if (!words) {
      r.error(f, subject(what, f.key) + ": " + words.error().message, "quote as a shell would, or use the list form");
      return std::nullopt;
    }
    return *words;
  }
  return r.strings(f, what, /*allow_single=*/true);
}

void parse_depends_on(YamlReader& r, const Field& f, std::string_view what, ComposeService& s, ServiceRefs& refs) {
  auto add = [&](const std::string& name, DependCondition c, const Field& at) {
    if (s.depends_on.count(name)) {
      r.error(at, prefix(what) + "depends on '" + name + "' twice");
      return;
    }
    s.depends_on[name] = c;
    refs.depends_on.push_back(ServiceRef{name, at});
  };
  if (f.node.IsSequence()) {
    for (const auto& item : r.sequence(f, what)) {
      if (auto name = r.string(item, what)) add(*name, DependCondition::kStarted, item);
    }
    return;
  }
  if (!f.node.IsMap()) {
    r.error(f, subject(what, f.key) + " must be a list of services or a mapping");
    return;
  }
  for (const auto& dep : r.mapping(f, what)) {
    std::string dep_what = prefix(what) + "depends_on '" + dep.key + "'";
    DependCondition cond = DependCondition::kStarted;
    for (const auto& k : r.known_keys(r.mapping_or_null(dep, dep_what), dep_what, {"condition"})) {
      auto c = r.string(k, dep_what);
      if (!c) continue;
      if (*c == "service_started") {
        cond = DependCondition::kStarted;
      } else if (*c == "service_healthy") {
        cond = DependCondition::kHealthy;
      } else if (*c == "service_completed_successfully") {
        r.error(k, subject(dep_what, "condition") + ": 'service_completed_successfully' is not supported",
                "forgectl runs long-lived services only; do one-off setup in the image or the entrypoint");
      } else {
        r.error(k, subject(dep_what, "condition") + " must be service_started or service_healthy, got '" + *c + "'");
      }
    }
    Field at = dep;
    at.mark = dep.key_mark;
    add(dep.key, cond, at);
  }
}

bool is_alias(std::string_view a) {
  if (a.empty() || !std::isalnum(static_cast<unsigned char>(a.front()))) return false;
  return std::all_of(a.begin(), a.end(), [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_' || c == '.'; });
}

void parse_service_networks(YamlReader& r, const Field& f, std::string_view what, ComposeService& s,
                            ServiceRefs& refs) {
  auto add = [&](const std::string& name, const Field& at) {
    refs.networks.push_back(ServiceRef{name, at});
    return &s.networks[name];
  };
  if (f.node.IsSequence()) {
    for (const auto& item : r.sequence(f, what)) {
      if (auto name = r.string(item, what)) add(*name, item);
    }
    return;
  }
  if (!f.node.IsMap()) {
    r.error(f, subject(what, f.key) + " must be a list of networks or a mapping");
    return;
  }
  for (const auto& net : r.mapping(f, what)) {
    std::string net_what = prefix(what) + "network '" + net.key + "'";
    Field at = net;
    at.mark = net.key_mark;
    auto* aliases = add(net.key, at);
    for (const auto& k : r.mapping_or_null(net, net_what)) {
      if (k.key == "aliases") {
        for (const auto& a : r.sequence(k, net_what)) {
          auto alias = r.string(a, net_what);
          if (!alias) continue;
          if (!is_alias(*alias)) r.error(a, prefix(net_what) + "alias '" + *alias + "' is not a valid host name");
          else aliases->push_back(*alias);
        }
      } else if (k.key == "ipv4_address" || k.key == "ipv6_address" || k.key == "link_local_ips" ||
                 k.key == "mac_address") {
        r.error(k, prefix(net_what) + "unsupported key '" + k.key + "'",
                "addresses are forgectl's, from its own pool", At::kKey);
      } else {
        r.unknown_key(k, net_what, {"aliases"}, "supported: aliases");
      }
    }
  }
}

void parse_tmpfs(YamlReader& r, const Field& f, std::string_view what, ComposeService& s) {
  std::vector<Field> items = f.node.IsScalar() ? std::vector<Field>{f} : r.sequence(f, what);
  for (const auto& item : items) {
    auto e = r.string(item, what);
    if (!e) continue;
    auto colon = e->find(':');
    std::string path = e->substr(0, colon);
    std::string options = colon == std::string::npos ? "" : e->substr(colon + 1);
    if (path.empty() || path.front() != '/') {
      r.error(item, subject(what, f.key) + ": '" + path + "' must be an absolute path");
    } else if (s.tmpfs.count(path)) {
      r.error(item, subject(what, f.key) + ": '" + path + "' is given twice");
    } else {
      s.tmpfs[path] = options;
    }
  }
}

void parse_labels(YamlReader& r, const Field& f, std::string_view what, ComposeService& s) {
  auto add = [&](std::string key, std::string value, const Field& at) {
    if (key.empty()) {
      r.error(at, subject(what, f.key) + ": a label needs a name");
    } else if (key.rfind("io.forgectl.", 0) == 0) {
      r.error(at, subject(what, f.key) + ": '" + key + "' is reserved",
              "labels under io.forgectl. are forgectl's own (ownership, leases); choose another prefix");
    } else {
      s.labels[std::move(key)] = std::move(value);
    }
  };
  if (f.node.IsSequence()) {
    for (const auto& item : r.sequence(f, what)) {
      auto entry = r.string(item, what);
      if (!entry) continue;
      auto eq = entry->find('=');
      add(entry->substr(0, eq), eq == std::string::npos ? "" : entry->substr(eq + 1), item);
    }
  } else if (f.node.IsMap()) {
    for (const auto& kv : r.mapping(f, what)) {
      std::string value;
      if (!kv.is_null()) {
        auto v = r.string(kv, what);
        if (!v) continue;
        value = *v;
      }
      Field at = kv;
      at.mark = kv.key_mark;
      add(kv.key, value, at);
    }
  } else {
    r.error(f, subject(what, f.key) + " must be a list or a mapping");
  }
}

bool is_port(std::string_view p) {
  if (p.empty() || p.size() > 5 || !std::all_of(p.begin(), p.end(), [](unsigned char c) { return std::isdigit(c); }))
    return false;
  int n = std::stoi(std::string(p));
  return n >= 1 && n <= 65535;
}

void parse_expose(YamlReader& r, const Field& f, std::string_view what, ComposeService& s) {
  for (const auto& item : r.sequence(f, what)) {
    auto e = r.string(item, what);
    if (!e) continue;
    std::string_view spec = *e;
    auto slash = spec.find('/');
    std::string_view proto = slash == std::string_view::npos ? "" : spec.substr(slash + 1);
    std::string_view ports = spec.substr(0, slash);
    auto dash = ports.find('-');
    bool ok = (proto.empty() || proto == "tcp" || proto == "udp") &&
              (dash == std::string_view::npos ? is_port(ports)
                                              : is_port(ports.substr(0, dash)) && is_port(ports.substr(dash + 1)));
    if (!ok) r.error(item, subject(what, f.key) + ": '" + *e + "' is not a port", "write 8080, 8080/tcp or 8000-8010");
    else s.expose.push_back(*e);
  }
}

}  // namespace

ComposeService parse_service(YamlReader& r, const Field& entry, const std::filesystem::path& dir, ServiceRefs& refs) {
  ComposeService s;
  s.name = entry.key;
  s.where = r.location(entry, At::kKey);
  const std::string what = "service '" + s.name + "'";
  if (!is_service_name(s.name)) {
    r.error(entry, what + ": the name is not valid",
            "use lower-case letters, digits, '_', '.' and '-', starting with a letter or digit", At::kKey);
  }
  Field body = entry;
  body.key.clear();  // messages say "service 'db' must be a mapping"
  const Field* environment = nullptr;
  const Field* env_file = nullptr;
  auto entries = r.mapping(body, what);
  for (const auto& f : entries) {
    const std::string& k = f.key;
    if (k.rfind("x-", 0) == 0) continue;  // compose extension fields: free-form by definition
    if (k == "image") {
      if (auto v = r.string(f, what)) {
        if (v->empty()) r.error(f, subject(what, k) + " is empty");
        s.image = *v;
      }
    } else if (k == "build") {
      s.build = parse_build(r, f, what, dir);
    } else if (k == "command") {
      s.command = parse_command(r, f, what);
    } else if (k == "entrypoint") {
      s.entrypoint = parse_command(r, f, what);
    } else if (k == "environment") {
      environment = &f;
    } else if (k == "env_file") {
      env_file = &f;
    } else if (k == "working_dir") {
      if (auto v = r.string(f, what)) {
        if (v->empty() || v->front() != '/') r.error(f, subject(what, k) + " must be an absolute path");
        s.working_dir = *v;
      }
    } else if (k == "user") {
      if (auto v = r.string(f, what)) s.user = *v;
    } else if (k == "healthcheck") {
      s.healthcheck = parse_healthcheck(r, f, what);
    } else if (k == "depends_on") {
      parse_depends_on(r, f, what, s, refs);
    } else if (k == "networks") {
      parse_service_networks(r, f, what, s, refs);
    } else if (k == "tmpfs") {
      parse_tmpfs(r, f, what, s);
    } else if (k == "read_only") {
      if (auto v = r.boolean(f, what)) s.read_only = *v;
    } else if (k == "cap_add") {
      s.cap_add = parse_caps(r, f, what, /*adding=*/true);
    } else if (k == "cap_drop") {
      s.cap_drop = parse_caps(r, f, what, /*adding=*/false);
    } else if (k == "mem_limit") {
      auto text = r.string(f, what);
      auto bytes = text ? parse_memory(*text) : std::nullopt;
      if (text && !bytes) r.error(f, subject(what, k) + ": '" + *text + "' is not a size", "write e.g. 256m or 1g");
      else if (bytes && *bytes < kMinMemory) r.error(f, subject(what, k) + " is below Docker's minimum of 6m");
      else if (bytes) s.mem_limit = *bytes;
    } else if (k == "cpus") {
      auto v = r.number(f, what);
      if (v && *v <= 0) r.error(f, subject(what, k) + " must be positive");
      else if (v) s.cpus = *v;
    } else if (k == "pids_limit") {
      auto v = r.integer(f, what);
      if (v && *v <= 0) r.error(f, subject(what, k) + " must be positive", "a sandbox always has a process limit");
      else if (v) s.pids_limit = *v;
    } else if (k == "labels") {
      parse_labels(r, f, what, s);
    } else if (k == "expose") {
      parse_expose(r, f, what, s);
    } else if (auto it = kRefused.find(k); it != kRefused.end()) {
      r.error(f, what + ": unsupported key '" + k + "'", std::string(it->second), At::kKey);
    } else {
      r.unknown_key(f, what, kServiceKeys, "see docs/compose.md for the supported keys");
    }
  }
  if (environment || env_file) s.environment = parse_service_env(r, environment, env_file, what, dir);
  if (s.image.empty() && !s.build && entry.node.IsMap()) {
    r.error(entry, what + " needs 'image' or 'build'", {}, At::kKey);
  }
  return s;
}

}  // namespace forge::manifest
