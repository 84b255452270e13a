// One compose service: the supported keys, and specific refusals for the dangerous ones.
#include "manifest/compose_service.h"

#include <algorithm>

#include "manifest/compose_rules.h"
#include "manifest/scalar_parse.h"

namespace forge::manifest {

namespace {

enum class Caps { kAdd, kDrop };

std::vector<std::string> parse_caps(YamlReader& r, const Field& f, std::string_view what, Caps which) {
  std::vector<std::string> out;
  for (const auto& item : r.sequence(f, what)) {
    auto s = r.string(item, what);
    if (!s) continue;
    std::string cap = normalise_capability(*s);
    std::string refusal = which == Caps::kAdd ? cap_add_refusal(cap) : "";  // dropping is always safe
    if (!is_capability(cap)) {
      r.error(item, prefix(what) + "'" + *s + "' in '" + f.key + "' is not a Linux capability");
    } else if (!refusal.empty()) {
      r.error(item, prefix(what) + "cap_add '" + cap + "' is not allowed", refusal);
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
  return r.strings(f, what, Strings::kStringOrList);
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
  return std::all_of(a.begin(), a.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_' || c == '.'; });
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
          if (!is_alias(*alias))
            r.error(a, prefix(net_what) + "alias '" + *alias + "' is not a valid host name");
          else
            aliases->push_back(*alias);
        }
      } else if (k.key == "ipv4_address" || k.key == "ipv6_address" || k.key == "link_local_ips" ||
                 k.key == "mac_address") {
        r.error(k, prefix(net_what) + "unsupported key '" + k.key + "'", "addresses are forgectl's, from its own pool",
                At::kKey);
      } else {
        r.unknown_key(k, net_what, {"aliases"}, "supported: aliases");
      }
    }
  }
}

// Every scalar under `n` (a volume entry, short or long syntax), to a small depth.
void volume_scalars(const YAML::Node& n, std::vector<std::string>& out, int depth = 0) {
  if (depth > 4 || out.size() > 64) return;
  if (n.IsScalar()) out.push_back(n.Scalar());
  if (n.IsSequence())
    for (const auto& item : n) volume_scalars(item, out, depth + 1);
  if (n.IsMap())
    for (const auto& kv : n) volume_scalars(kv.second, out, depth + 1);
}

}  // namespace

// `volumes` or `volumes_from` entries that name one of forgectl's own volumes each get an error
// at their line; true when there was one (the key is refused anyway, but this says why it matters).
bool refuse_forgectl_volumes(YamlReader& r, const Field& f, std::string_view what) {
  std::vector<Field> items = f.node.IsSequence() ? r.sequence(f, what) : std::vector<Field>{f};
  bool found = false;
  for (const auto& item : items) {
    std::vector<std::string> words;
    volume_scalars(item.node, words);
    for (const auto& w : words) {
      std::string source = w.substr(0, w.find(':'));
      if (!is_forgectl_volume_name(source)) continue;
      r.error(item, subject(what, f.key) + ": '" + source + "' is forgectl's own volume",
              std::string(kForgectlVolumeHint));
      found = true;
      break;
    }
  }
  return found;
}

namespace {

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
    } else if (path == kHelperMountPath || path.rfind(std::string(kHelperMountPath) + "/", 0) == 0) {
      r.error(item, subject(what, f.key) + ": '" + path + "' is where forgectl mounts its exec helper",
              "mount the tmpfs elsewhere");
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
    if (!ok)
      r.error(item, subject(what, f.key) + ": '" + *e + "' is not a port", "write 8080, 8080/tcp or 8000-8010");
    else
      s.expose.push_back(*e);
  }
}

// `x-forgectl`: forgectl's own extension, read as strictly as any key (other `x-*` are ignored).
void parse_forgectl_extension(YamlReader& r, const Field& f, std::string_view what, ComposeService& s) {
  std::string ext_what = prefix(what) + "x-forgectl";
  for (const auto& k : r.known_keys(r.mapping(f, what), ext_what, {"upstream"}))
    if (auto v = r.boolean(k, ext_what)) s.upstream = *v;
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
    if (k == "x-forgectl") {
      parse_forgectl_extension(r, f, what, s);
      continue;
    }
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
      s.cap_add = parse_caps(r, f, what, Caps::kAdd);
    } else if (k == "cap_drop") {
      s.cap_drop = parse_caps(r, f, what, Caps::kDrop);
    } else if (k == "mem_limit") {
      auto text = r.string(f, what);
      auto bytes = text ? parse_memory(*text) : std::nullopt;
      if (text && !bytes)
        r.error(f, subject(what, k) + ": '" + *text + "' is not a size", "write e.g. 256m or 1g");
      else if (bytes && *bytes < kMinMemoryLimit)
        r.error(f, subject(what, k) + " is below Docker's minimum of 6m");
      else if (bytes)
        s.mem_limit = *bytes;
    } else if (k == "cpus") {
      auto v = r.number(f, what);
      if (v && *v <= 0)
        r.error(f, subject(what, k) + " must be positive");
      else if (v)
        s.cpus = *v;
    } else if (k == "pids_limit") {
      auto v = r.integer(f, what);
      if (v && *v <= 0)
        r.error(f, subject(what, k) + " must be positive", "a sandbox always has a process limit");
      else if (v)
        s.pids_limit = *v;
    } else if (k == "labels") {
      parse_labels(r, f, what, s);
    } else if (k == "expose") {
      parse_expose(r, f, what, s);
    } else if ((k == "volumes" || k == "volumes_from") && refuse_forgectl_volumes(r, f, what)) {
      // named forgectl's own volume: that error, at the entry, says more than "unsupported key"
    } else if (auto hint = refused_service_key(k)) {
      r.error(f, what + ": unsupported key '" + k + "'", std::string(*hint), At::kKey);
    } else {
      r.unknown_key(f, what, compose_service_keys(), "see docs/compose.md for the supported keys");
    }
  }
  if (environment || env_file) s.environment = parse_service_env(r, environment, env_file, what, dir);
  if (s.image.empty() && !s.build && entry.node.IsMap()) {
    r.error(entry, what + " needs 'image' or 'build'", {}, At::kKey);
  }
  return s;
}

}  // namespace forge::manifest
