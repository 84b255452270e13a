// The environment manifest's keys: network policy and its allowlist, compose file or built-in
// stack, the runner, and per-service isolation.
#include "manifest/environment_parse.h"

#include <algorithm>
#include <filesystem>

#include "core/confined_dir.h"
#include "manifest/environment_reader.h"
#include "manifest/files.h"
#include "manifest/scalar_parse.h"
#include "manifest/stacks.h"

namespace forge::manifest {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kEnvironmentKeys = {"network_policy",
                                                   "limited_internet_allowlist",
                                                   "limited_internet_allow_private",
                                                   "limited_internet_allow_http",
                                                   "limited_internet_ports",
                                                   "compose_file",
                                                   "stack",
                                                   "runner",
                                                   "services",
                                                   "runtime",
                                                   "setup_script",
                                                   "setup_fork"};
const std::vector<std::string> kPhaseKeys = {"setup", "agent", "grade"};
const std::vector<std::string> kRunnerKeys = {"image",           "user",    "workdir", "memory", "cpus", "pids_limit",
                                              "env_passthrough", "disk_mb", "tmp_mb"};
const std::vector<std::string> kServiceKeys = {"read_only",  "memory",          "cpus",
                                               "pids_limit", "env_passthrough", "disk_mb"};

std::string dotted(const std::string& what, const std::string& key) { return what.empty() ? key : what + "." + key; }

// A host name, or ".domain" for the domain and its subdomains; "" when valid, else why not.
std::pair<std::string, std::string> check_host(std::string_view host) {
  if (host.find("://") != std::string_view::npos || host.find('/') != std::string_view::npos)
    return {"is not a host name", "give host names only, without scheme or path"};
  if (host.find('*') != std::string_view::npos)
    return {"has a wildcard", "write .example.org for example.org and all its subdomains"};
  if (host.find(':') != std::string_view::npos) return {"has a port", "ports go in limited_internet_ports"};
  std::string_view name = host.front() == '.' ? host.substr(1) : host;
  if (name.empty() || name.size() > 253) return {"is not a host name", ""};
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t dot = name.find('.', start);
    std::string_view label = name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    bool ok = !label.empty() && label.size() <= 63 && label.front() != '-' && label.back() != '-' &&
              std::all_of(label.begin(), label.end(),
                          [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_'; });
    if (!ok) return {"is not a host name", "letters, digits and '-' between dots"};
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return {"", ""};
}

void read_memory(YamlReader& r, const Field& f, const std::string& what, std::int64_t& out) {
  auto text = r.string(f, what);
  if (!text) return;
  auto bytes = parse_memory(*text);
  if (!bytes)
    r.error(f, subject(what, f.key) + ": '" + *text + "' is not a size", "write e.g. 512m or 2g");
  else if (*bytes < kMinMemoryLimit)
    r.error(f, subject(what, f.key) + " is below Docker's minimum of 6m");
  else
    out = *bytes;
}

void read_cpus(YamlReader& r, const Field& f, const std::string& what, double& out) {
  auto v = r.number(f, what);
  if (v && *v <= 0)
    r.error(f, subject(what, f.key) + " must be positive");
  else if (v)
    out = *v;
}

void read_pids(YamlReader& r, const Field& f, const std::string& what, std::int64_t& out) {
  auto v = r.integer(f, what);
  if (v && *v <= 0)
    r.error(f, subject(what, f.key) + " must be positive", "a sandbox always has a process limit");
  else if (v)
    out = *v;
}

// A disk cap in MiB: every size has a limit, and one below 16 MiB cannot hold a workspace.
void read_disk_mb(YamlReader& r, const Field& f, const std::string& what, std::int64_t& out) {
  auto v = r.integer(f, what);
  if (v && (*v < kMinDiskMb || *v > kMaxDiskMb))
    r.error(f, subject(what, f.key) + " must be between " + std::to_string(kMinDiskMb) + " and " +
                   std::to_string(kMaxDiskMb) + " (MiB)");
  else if (v)
    out = *v;
}

std::vector<std::string> read_passthrough(YamlReader& r, const Field& f, const std::string& what) {
  std::vector<std::string> out;
  for (const auto& item : r.sequence(f, what)) {
    auto name = r.string(item, what);
    if (!name) continue;
    if (!is_env_name(*name)) {
      r.error(item, subject(what, f.key) + ": '" + *name + "' is not a variable name", "[A-Za-z_][A-Za-z0-9_]*");
    } else if (std::find(out.begin(), out.end(), *name) != out.end()) {
      r.error(item, subject(what, f.key) + ": '" + *name + "' is given twice");
    } else {
      out.push_back(*name);
    }
  }
  return out;
}

RunnerSpec read_runner(YamlReader& r, const Field& f, const std::string& what) {
  RunnerSpec spec;
  for (const auto& k : r.known_keys(r.mapping_or_null(f, what), what, kRunnerKeys)) {
    if (k.key == "image") {
      auto v = r.string(k, what);
      if (v && (v->empty() || v->find_first_of(" \t\n") != std::string::npos))
        r.error(k, subject(what, "image") + ": '" + *v + "' is not an image reference");
      else if (v)
        spec.image = *v;
    } else if (k.key == "user") {
      auto v = r.string(k, what);
      if (!v) continue;
      if (*v == "root") {  // the one name every image knows; weaker than the default agent uid
        spec.user = "0:0";
        continue;
      }
      auto colon = v->find(':');
      auto numeric = [](std::string_view s) {
        return !s.empty() && s.size() <= 10 &&
               std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
      };
      bool ok = colon == std::string::npos
                    ? numeric(*v)
                    : numeric(std::string_view(*v).substr(0, colon)) && numeric(std::string_view(*v).substr(colon + 1));
      if (!ok) {
        r.error(k, subject(what, "user") + " must be \"uid\", \"uid:gid\" or \"root\", got '" + *v + "'",
                "user names depend on the image's /etc/passwd; give numeric ids");
      } else {
        spec.user = *v;
      }
    } else if (k.key == "workdir") {
      auto v = r.string(k, what);
      if (v && (v->empty() || v->front() != '/'))
        r.error(k, subject(what, "workdir") + " must be an absolute path");
      else if (v)
        spec.workdir = *v;
    } else if (k.key == "memory") {
      read_memory(r, k, what, spec.resources.memory);
    } else if (k.key == "cpus") {
      read_cpus(r, k, what, spec.resources.cpus);
    } else if (k.key == "pids_limit") {
      read_pids(r, k, what, spec.resources.pids_limit);
    } else if (k.key == "env_passthrough") {
      spec.env_passthrough = read_passthrough(r, k, what);
    } else if (k.key == "disk_mb") {
      read_disk_mb(r, k, what, spec.disk_mb);
    } else if (k.key == "tmp_mb") {
      read_disk_mb(r, k, what, spec.tmp_mb);
    }
  }
  return spec;
}

std::map<std::string, ServiceIsolation> read_services(YamlReader& r, const Field& f, const std::string& what) {
  std::map<std::string, ServiceIsolation> out;
  for (const auto& entry : r.mapping_or_null(f, what)) {
    const std::string svc_what = dotted(what, entry.key);
    ServiceIsolation iso;
    iso.where = r.location(entry, At::kKey);
    if (!is_service_name(entry.key)) r.error(entry, what + ": '" + entry.key + "' is not a service name", {}, At::kKey);
    Field body = entry;
    body.key.clear();
    for (const auto& k : r.known_keys(r.mapping_or_null(body, svc_what), svc_what, kServiceKeys)) {
      if (k.key == "read_only") {
        if (auto b = r.boolean(k, svc_what)) iso.read_only = *b;
      } else if (k.key == "memory") {
        read_memory(r, k, svc_what, iso.resources.memory);
      } else if (k.key == "cpus") {
        read_cpus(r, k, svc_what, iso.resources.cpus);
      } else if (k.key == "pids_limit") {
        read_pids(r, k, svc_what, iso.resources.pids_limit);
      } else if (k.key == "env_passthrough") {
        iso.env_passthrough = read_passthrough(r, k, svc_what);
      } else if (k.key == "disk_mb") {
        read_disk_mb(r, k, svc_what, iso.disk_mb);
      }
    }
    out[entry.key] = std::move(iso);
  }
  return out;
}

// One policy name (`network_policy`, or one phase's entry of its map); nullopt after an error.
std::optional<NetworkPolicy> read_policy(YamlReader& r, const Field& f, const std::string& what) {
  auto v = r.string(f, what);
  if (!v) return std::nullopt;
  if (auto p = policy_from_name(*v)) return p;
  std::string close = closest_match(*v, {"no_internet", "limited_internet", "full_internet"});
  r.error(f, subject(what, f.key) + " must be no_internet, limited_internet or full_internet, got '" + *v + "'",
          close.empty() ? "" : "did you mean '" + close + "'?");
  return std::nullopt;
}

// `network_policy`: a name (setup and agent; grading keeps no network), or a map by phase whose
// missing setup is the agent's, missing agent no_internet, missing grade no_internet. False after an error.
bool read_network_policy(YamlReader& r, const Field& k, const std::string& what, EnvironmentManifest& m) {
  if (!k.node.IsMap()) {
    auto p = read_policy(r, k, what);
    if (p) m.network_policy = *p;
    return p.has_value();
  }
  const std::string inner = dotted(what, "network_policy");
  bool valid = true;
  for (const auto& e : r.known_keys(r.mapping(k, inner), inner, kPhaseKeys)) {
    auto p = read_policy(r, e, inner);
    valid = valid && p.has_value();
    if (!p) continue;
    if (e.key == "setup") m.setup_network_policy = *p;
    if (e.key == "agent") m.network_policy = *p;
    if (e.key == "grade") m.grade_network_policy = *p;
  }
  return valid;
}

// `setup_script`: a regular file beneath the manifest's directory; its absolute path.
std::string read_setup_script(YamlReader& r, const Field& k, const std::string& what, const std::string& manifest) {
  auto v = r.string(k, what);
  if (!v) return "";
  if (v->empty() || fs::path(*v).is_absolute()) {
    r.error(k, subject(what, k.key) + " must be a path relative to the manifest, got '" + *v + "'");
    return "";
  }
  auto d = ConfinedDir::open(fs::path(manifest).parent_path().string(), "the manifest's directory");
  auto st = d ? d->stat(*v) : Result<ConfinedStat>(d.fail());
  if (!st) {
    r.error(k, subject(what, k.key) + ": " + st.error().message, "keep the script in the task's directory");
    return "";
  }
  if (st->kind != EntryKind::kFile) {
    r.error(k, subject(what, k.key) + ": '" + *v + "' is not a regular file");
    return "";
  }
  return fs::path(join_path(fs::path(manifest).parent_path(), *v)).string();
}

}  // namespace

ReadEnvironment read_environment(YamlReader& r, const Field& block, const std::string& what) {
  ReadEnvironment out;
  EnvironmentManifest& m = out.manifest;
  std::error_code ec;
  m.path = fs::absolute(r.file(), ec).lexically_normal().string();
  m.where = r.location(block, At::kKey);  // the `environment:` key in a task.yaml
  const fs::path shown_dir = fs::path(r.file()).parent_path();

  std::vector<Field> limited_keys;  // limited_internet_* keys, valid only under that policy
  const Field* policy_at = nullptr;
  const Field* allowlist_at = nullptr;
  const Field* compose_at = nullptr;
  const Field* stack_at = nullptr;
  bool policy_valid = true;  // after a bad network_policy, the limited_* checks would only echo it
  Field body = block;
  if (!what.empty()) body.key.clear();
  // Kept in a local: the loop below keeps pointers to some entries.
  const std::vector<Field> entries = r.known_keys(r.mapping_or_null(body, what), what, kEnvironmentKeys);
  for (const auto& k : entries) {
    if (k.key.rfind("limited_internet_", 0) == 0) limited_keys.push_back(k);
    if (k.key == "network_policy") {
      policy_at = &k;
      policy_valid = read_network_policy(r, k, what, m);
    } else if (k.key == "limited_internet_allowlist") {
      allowlist_at = &k;
      for (const auto& item : r.sequence(k, what)) {
        auto host = r.string(item, what);
        if (!host) continue;
        auto [problem, hint] = host->empty() ? std::pair<std::string, std::string>{"is empty", ""} : check_host(*host);
        if (!problem.empty())
          r.error(item, subject(what, k.key) + ": '" + *host + "' " + problem, hint);
        else if (std::find(m.allowlist.begin(), m.allowlist.end(), *host) != m.allowlist.end())
          r.error(item, subject(what, k.key) + ": '" + *host + "' is given twice");
        else
          m.allowlist.push_back(*host);
      }
    } else if (k.key == "limited_internet_allow_private") {
      if (auto b = r.boolean(k, what)) m.allow_private = *b;
    } else if (k.key == "limited_internet_allow_http") {
      if (auto b = r.boolean(k, what)) m.allow_plain_http = *b;
    } else if (k.key == "limited_internet_ports") {
      std::vector<int> ports;
      for (const auto& item : r.sequence(k, what)) {
        auto n = r.integer(item, what);
        if (n && (*n < 1 || *n > 65535))
          r.error(item, subject(what, k.key) + ": " + std::to_string(*n) + " is not a port");
        else if (n && std::find(ports.begin(), ports.end(), *n) != ports.end())
          r.error(item, subject(what, k.key) + ": " + std::to_string(*n) + " is given twice");
        else if (n)
          ports.push_back(static_cast<int>(*n));
      }
      if (k.node.IsSequence() && k.node.size() == 0)
        r.error(k, subject(what, k.key) + " is empty", "leave it out for the default, 443");
      if (!ports.empty()) m.connect_ports = ports;
    } else if (k.key == "compose_file") {
      compose_at = &k;
      auto v = r.string(k, what);
      if (!v) continue;
      if (v->empty() || fs::path(*v).is_absolute()) {
        r.error(k, subject(what, "compose_file") + " must be a path relative to the manifest, got '" + *v + "'");
        continue;
      }
      out.compose_shown = join_path(shown_dir, *v);
      m.compose_file = fs::path(join_path(fs::path(m.path).parent_path(), *v)).string();
      // Beneath the manifest's directory, as every file a task names: no "..", no symlink out.
      auto d = ConfinedDir::open(fs::path(m.path).parent_path().string(), "the manifest's directory");
      auto st = d ? d->stat(*v) : Result<ConfinedStat>(d.fail());
      if (!st && st.error().code == Errc::kNotFound) {
        r.error(k, subject(what, "compose_file") + ": '" + out.compose_shown + "' does not exist",
                "compose_file is relative to the manifest's directory");
      } else if (!st) {
        r.error(k, subject(what, "compose_file") + ": " + st.error().message,
                "keep the compose file in the manifest's directory");
      } else if (st->kind != EntryKind::kFile) {
        r.error(k, subject(what, "compose_file") + ": '" + out.compose_shown + "' is not a regular file");
      }
    } else if (k.key == "stack") {
      stack_at = &k;
      auto v = r.string(k, what);
      if (!v) continue;
      auto names = builtin_stack_names();
      if (std::find(names.begin(), names.end(), *v) == names.end()) {
        r.error(k, subject(what, "stack") + " must be core, full or none, got '" + *v + "'");
      } else {
        m.stack = *v;
      }
    } else if (k.key == "setup_script") {
      m.setup_script = read_setup_script(r, k, what, m.path);
    } else if (k.key == "setup_fork") {
      if (auto v = r.boolean(k, what)) m.setup_fork = *v;
    } else if (k.key == "runtime") {
      auto v = r.string(k, what);
      if (!v) continue;
      if (auto bad = runtime_name_problem(*v); !bad.empty())
        r.error(k, subject(what, "runtime") + ": " + bad);
      else if (!is_auto_runtime(*v))
        m.runtime = *v;
    } else if (k.key == "runner") {
      m.runner = read_runner(r, k, dotted(what, "runner"));
    } else if (k.key == "services") {
      m.services = read_services(r, k, dotted(what, "services"));
    }
  }

  const bool limited = m.network_policy == NetworkPolicy::kLimitedInternet ||
                       phase_policy(m, Phase::kSetup) == NetworkPolicy::kLimitedInternet ||
                       m.grade_network_policy == NetworkPolicy::kLimitedInternet;
  // A non-empty allowlist whose every entry was refused has been reported already.
  const bool allowlist_written = allowlist_at && allowlist_at->node.IsSequence() && allowlist_at->node.size() > 0;
  if (policy_valid && !limited) {
    for (const auto& k : limited_keys) {
      r.error(k,
              subject(what, k.key) + " applies only to network_policy: limited_internet (this is " +
                  policy_name(m.network_policy) + ")",
              "set network_policy: limited_internet, or remove it", At::kKey);
    }
  }
  if (limited && m.allowlist.empty() && !allowlist_written) {
    const Field& at = allowlist_at ? *allowlist_at : *policy_at;
    r.error(at, prefix(what) + "limited_internet needs a non-empty limited_internet_allowlist",
            "list the hosts the agent may reach: api.example.org, or .example.org for a domain and its subdomains");
  }
  if (compose_at && stack_at) {
    r.error(*stack_at, prefix(what) + "give either compose_file or stack, not both",
            "stack names a built-in stack, used when there is no compose file", At::kKey);
  }
  return out;
}

EnvironmentManifest parse_environment(std::string_view text, const std::string& path, Diagnostics& diags) {
  YamlReader r(path, diags);
  auto root = r.parse(text);
  if (!root) return EnvironmentManifest{};
  if (root->is_null()) {
    // An empty manifest is all defaults.
    EnvironmentManifest m;
    std::error_code ec;
    m.path = fs::absolute(path, ec).lexically_normal().string();
    m.where = SourceLocation{path, 0, 0};
    return m;
  }
  return read_environment(r, *root, "").manifest;
}

Result<EnvironmentManifest> parse_environment(std::string_view text, const std::string& path) {
  Diagnostics diags;
  EnvironmentManifest m = parse_environment(text, path, diags);
  if (!diags.empty()) return fail(diags.to_error());
  return m;
}

}  // namespace forge::manifest
