// The small values of a task.toml that several tables share: seconds, env tables (templates kept
// unresolved), network policies with Harbor's allowed_hosts rules, artifacts and healthchecks.
#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <regex>

#include "manifest/harbor/harbor_reader.h"

namespace forge::manifest {

namespace {

constexpr double kMaxSeconds = 30.0 * 24 * 3600;

// Harbor's template: the whole value is "${VAR}" or "${VAR:-fallback}".
const std::regex kTemplate(R"(\$\{([^}:]+)(?::-(.*))?\})");
const std::regex kHostLabel("^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$");
const std::regex kServiceName("^[a-zA-Z0-9][a-zA-Z0-9_.-]*$");

bool is_address(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

bool is_cidr(const std::string& s) {
  std::size_t slash = s.find('/');
  std::string addr = s.substr(0, slash), bits = s.substr(slash + 1);
  auto digit = [](unsigned char c) { return std::isdigit(c) != 0; };
  if (slash == std::string::npos || bits.empty() || bits.size() > 3 || !std::all_of(bits.begin(), bits.end(), digit))
    return false;
  unsigned char buf[16];
  int max = inet_pton(AF_INET, addr.c_str(), buf) == 1 ? 32 : inet_pton(AF_INET6, addr.c_str(), buf) == 1 ? 128 : -1;
  return max > 0 && std::stoi(bits) <= max;
}

// Harbor's normal form for one allowed_hosts entry, or nullopt with `why` set.
std::optional<std::string> normal_host(std::string h, std::string& why) {
  auto refuse = [&](const char* reason) -> std::optional<std::string> {
    why = reason;
    return std::nullopt;
  };
  h.erase(0, h.find_first_not_of(" \t"));
  h.erase(h.find_last_not_of(" \t") + 1);
  std::transform(h.begin(), h.end(), h.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  while (!h.empty() && h.back() == '.') h.pop_back();
  if (h.empty()) return refuse("an empty entry");
  if (h.find('/') != std::string::npos) return is_cidr(h) ? h : refuse("not a host name, address or CIDR range");
  if (h.find(':') != std::string::npos) return is_address(h) ? h : refuse("not a host name (URLs and ports are not)");
  std::string name = h.rfind("*.", 0) == 0 ? h.substr(2) : h;
  if (name.find('*') != std::string::npos) return refuse("a wildcard other than a leading '*.'");
  std::size_t start = 0;
  while (true) {
    std::size_t dot = name.find('.', start);
    if (!std::regex_match(name.substr(start, dot == std::string::npos ? std::string::npos : dot - start), kHostLabel))
      return refuse("not a valid host name");
    if (dot == std::string::npos) return h;
    start = dot + 1;
  }
}

NetworkMode parse_mode(TomlReader& r, const TomlField& f, std::string_view table, bool& ok) {
  ok = false;
  auto s = r.string(f, table);
  if (!s) return NetworkMode::kPublic;
  static const std::vector<std::string> kModes = {"public", "no-network", "allowlist"};
  ok = true;
  if (*s == "public") return NetworkMode::kPublic;
  if (*s == "no-network") return NetworkMode::kNoNetwork;
  if (*s == "allowlist") return NetworkMode::kAllowlist;
  ok = false;
  std::string close = closest_match(*s, kModes);
  r.error(f, toml_subject(table, f.key) + " must be \"public\", \"no-network\" or \"allowlist\", got '" + *s + "'",
          close.empty() ? "" : "did you mean '" + close + "'?");
  return NetworkMode::kPublic;
}

// The system directory (programs, libraries, /etc) a `main` artifact source is or lies under; null
// for anything else.
const char* system_dir(const Artifact& a, const std::string& source, bool absolute) {
  static constexpr const char* kSystem[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/usr", "/etc"};
  if (!absolute || !(a.service.empty() || a.service == "main")) return nullptr;
  for (const char* sys : kSystem)
    if (source == sys || source.rfind(std::string(sys) + "/", 0) == 0) return sys;
  return nullptr;
}

}  // namespace

std::optional<std::string> normal_path(std::string_view p) {
  const bool absolute = !p.empty() && p.front() == '/';
  std::string out;
  std::size_t at = 0;
  while (at <= p.size()) {
    std::size_t slash = p.find('/', at);
    if (slash == std::string_view::npos) slash = p.size();
    const std::string_view part = p.substr(at, slash - at);
    at = slash + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") return std::nullopt;
    if (!out.empty() || absolute) out += '/';
    out += part;
  }
  if (absolute && out.empty()) out = "/";
  return out;
}

std::string reserved_verifier_path(std::string_view p) {
  // `a` is `b` or a directory above it.
  auto holds = [](std::string_view a, std::string_view b) {
    return a == "/" || a == b || (b.size() > a.size() && b.substr(0, a.size()) == a && b[a.size()] == '/');
  };
  for (const char* r : kVerifierReservedPaths)
    if (holds(p, r) || holds(r, p)) return r;
  return {};
}

const char* to_string(NetworkMode m) {
  switch (m) {
    case NetworkMode::kPublic:
      return "public";
    case NetworkMode::kNoNetwork:
      return "no-network";
    case NetworkMode::kAllowlist:
      return "allowlist";
  }
  return "public";
}

std::optional<double> read_seconds(TomlReader& r, const TomlField& f, std::string_view table) {
  auto v = r.number(f, table);
  if (v && (*v <= 0 || *v > kMaxSeconds)) {
    r.error(f, toml_subject(table, f.key) + " must be more than 0 and at most 30 days, got " + std::to_string(*v));
    return std::nullopt;
  }
  return v;
}

std::vector<EnvEntry> read_env(TomlReader& r, const TomlField& f, std::string_view table) {
  std::vector<EnvEntry> out;
  auto entries = r.entries(f, toml_path(table, f.key));
  if (entries.size() > kMaxListItems) {
    r.error(f, toml_subject(table, f.key) + " has more than " + std::to_string(kMaxListItems) + " variables");
    return out;
  }
  const std::string where = toml_path(table, f.key);
  for (const auto& e : entries) {
    if (e.key.empty() || e.key.find_first_of("=\0", 0, 2) != std::string::npos) {
      r.error(e, "[" + where + "] '" + e.key + "' is not a variable name", {}, TomlAt::kKey);
      continue;
    }
    auto v = r.string(e, where);
    if (!v) continue;
    EnvEntry env{e.key, *v, {}, std::nullopt, SourceLocation{r.file(), e.key_line, e.key_column}};
    std::smatch m;
    if (std::regex_match(*v, m, kTemplate)) {
      env.host_var = m[1].str();
      if (m[2].matched) env.fallback = m[2].str();
    } else if (v->find("${") != std::string::npos) {
      r.warning(e, toml_subject(where, e.key) +
                       " is used as written: Harbor resolves only a value that is wholly "
                       "\"${VAR}\" or \"${VAR:-fallback}\"");
    }
    out.push_back(std::move(env));
  }
  return out;
}

bool NetworkKeys::take(const TomlField& e) {
  if (e.key == "network_mode") return mode = e, true;
  if (e.key == "allowed_hosts") return hosts = e, true;
  return false;
}

std::optional<HarborNetwork> read_network(TomlReader& r, const NetworkKeys& keys, std::string_view table) {
  HarborNetwork p;
  bool have_mode = false;
  if (keys.mode) p.mode = parse_mode(r, *keys.mode, table, have_mode);
  if (keys.hosts) {
    auto hosts = r.strings(*keys.hosts, table, kMaxListItems);
    if (hosts) {
      auto items = r.items(*keys.hosts, table, kMaxListItems);
      for (std::size_t i = 0; i < hosts->size(); ++i) {
        std::string why;
        auto h = normal_host((*hosts)[i], why);
        if (!h)
          r.error(items[i], toml_subject(table, "allowed_hosts") + ": '" + (*hosts)[i] + "' is " + why);
        else if (is_address(*h) || h->find('/') != std::string::npos)
          r.error(items[i], toml_subject(table, "allowed_hosts") + ": '" + *h + "' is an address, not a host name",
                  "forgectl's egress proxy allows host names only; name the host");
        else if (std::find(p.allowed_hosts.begin(), p.allowed_hosts.end(), *h) == p.allowed_hosts.end())
          p.allowed_hosts.push_back(*h);
      }
    }
    // Harbor reads allowed_hosts without a network_mode as an allowlist.
    if (!keys.mode)
      p.mode = NetworkMode::kAllowlist, have_mode = true;
    else if (have_mode && p.mode != NetworkMode::kAllowlist)
      r.error(*keys.hosts, toml_subject(table, "allowed_hosts") + " is only valid with network_mode = \"allowlist\"",
              {}, TomlAt::kKey);
  }
  if (keys.allow_internet) {
    auto allow = r.boolean(*keys.allow_internet, table);
    if (allow && (keys.mode || keys.hosts)) {
      r.warning(*keys.allow_internet, toml_subject(table, "allow_internet") + " has no effect: network_mode is set",
                "allow_internet is older files' spelling; remove it");
    } else if (allow) {
      p.mode = *allow ? NetworkMode::kPublic : NetworkMode::kNoNetwork;
      have_mode = true;
    }
  }
  if (!have_mode) return std::nullopt;
  return p;
}

std::optional<HealthcheckConfig> read_healthcheck(TomlReader& r, const TomlField& f, std::string_view table) {
  HealthcheckConfig h;
  const std::string where = toml_path(table, f.key);
  bool ok = true, has_command = false;
  for (const auto& e : r.entries(f, where)) {
    double* seconds = e.key == "interval_sec"         ? &h.interval_sec
                      : e.key == "timeout_sec"        ? &h.timeout_sec
                      : e.key == "start_period_sec"   ? &h.start_period_sec
                      : e.key == "start_interval_sec" ? &h.start_interval_sec
                                                      : nullptr;
    if (e.key == "command") {
      auto c = r.string(e, where);
      if (c && c->find_first_not_of(" \t\n") == std::string::npos)
        r.error(e, toml_subject(where, "command") + " is empty");
      else if (c)
        h.command = *c, has_command = true;
      ok = ok && c;
    } else if (seconds) {
      auto v = r.number(e, where);
      if (v && (*v < 0 || *v > kMaxSeconds))
        r.error(e, toml_subject(where, e.key) + " must be 0 to 30 days");
      else if (v)
        *seconds = *v;
    } else if (e.key == "retries") {
      auto v = r.integer(e, where);
      if (v && (*v < 0 || *v > 10000))
        r.error(e, toml_subject(where, e.key) + " must be 0 to 10000");
      else if (v)
        h.retries = static_cast<int>(*v);
    } else {
      r.unknown_key(e, where,
                    {"command", "interval_sec", "timeout_sec", "start_period_sec", "start_interval_sec", "retries"});
    }
  }
  if (!has_command && ok && f.node && f.node->is_table())
    r.error(f, "[" + where + "] has no 'command'", {}, TomlAt::kKey);
  if (!has_command) return std::nullopt;
  return h;
}

std::vector<Artifact> read_artifacts(TomlReader& r, const TomlField& f, std::string_view table) {
  std::vector<Artifact> out;
  for (const auto& item : r.items(f, table, kMaxListItems)) {
    Artifact a;
    a.where = SourceLocation{r.file(), item.line, item.column};
    const std::string where = toml_path(table, item.key);
    if (item.node->is_string()) {
      a.source = *r.string(item, table);
    } else {
      for (const auto& e : r.entries(item, where)) {
        if (e.key == "source" || e.key == "destination" || e.key == "service") {
          auto v = r.string(e, where);
          if (v) (e.key == "source" ? a.source : e.key == "destination" ? a.destination : a.service) = *v;
        } else if (e.key == "exclude") {
          if (auto v = r.strings(e, where, kMaxListItems)) a.exclude = *v;
        } else {
          r.unknown_key(e, where, {"source", "destination", "exclude", "service"});
        }
      }
    }
    // Both paths in their normal form first: "./manifest.json" is "manifest.json", "//logs/" is "/logs".
    const auto source = normal_path(a.source);
    const auto dest = normal_path(a.destination);
    const bool absolute = source && !source->empty() && source->front() == '/';
    if (a.source.empty()) {
      r.error(item, "[" + where + "] needs a 'source'");
    } else if (!source) {
      r.error(item, "[" + where + "] source '" + a.source + "' must not contain '..'");
    } else if (const std::string kept = absolute ? reserved_verifier_path(*source) : ""; !kept.empty()) {
      // A main-service artifact is put into the verifier's container at its own path, owned by the
      // agent: there it could plant the reward, the tests' neighbours or a broken as-agent socket.
      // Other services' are held to the same rule, so that it is one rule.
      r.error(item,
              "[" + where + "] source '" + a.source + "' is, holds or lies inside " + kept +
                  ", which the verifier's container keeps for forgectl and the tests",
              "artifacts go into the verifier's container at their own path; collect a path outside /tests, "
              "/logs/verifier, /tmp/forgectl-as-agent, /.forgectl and /forgectl-verifier-home "
              "(e.g. /logs/artifacts or /app/out)");
    } else if (!a.destination.empty() && (a.destination.front() == '/' || !dest || dest->empty() ||
                                          a.destination.find('\\') != std::string::npos)) {
      r.error(item, "[" + where + "] destination '" + a.destination +
                        "' must be a relative path inside the trial's artifact directory, without '..'");
    } else if (const std::string d = a.destination.empty() ? (absolute ? source->substr(1) : "") : *dest;
               d == "manifest.json" || d.rfind("manifest.json/", 0) == 0) {
      r.error(item, "[" + where + "] destination '" + (a.destination.empty() ? d : a.destination) +
                        "' is reserved for the collection manifest (artifacts/manifest.json)");
    } else if (!a.service.empty() && !std::regex_match(a.service, kServiceName)) {
      r.error(item, "[" + where + "] service '" + a.service + "' is not a compose service name");
    } else if (!a.service.empty() && a.service != "main" && !absolute) {
      r.error(item, "[" + where + "] source '" + a.source + "' of service '" + a.service + "' must be absolute");
    } else if (const char* sys = system_dir(a, *source, absolute)) {
      // Programs, libraries and /etc (ld.so.preload) there would run in every test with the
      // verifier's rights: a python3 the agent put earlier on PATH forges any reward.
      r.error(item, "[" + where + "] source '" + a.source + "' is under " + sys +
                        ": the verifier's container would receive it owned by the agent and run what is there (a "
                        "program on PATH, a library, /etc/ld.so.preload) with the verifier's rights; collect the "
                        "agent's output files instead, or run its tool through $FORGECTL_AS_AGENT");
    } else if ((a.service.empty() || a.service == "main") && absolute &&
               (*source == "/tmp" || source->rfind("/tmp/", 0) == 0)) {
      // The runner's /tmp is a tmpfs mount, which Docker's archive API does not read: the artifact
      // would be missing on every trial, and the tests needing it fail whatever the agent did.
      r.error(item, "[" + where + "] source '" + a.source +
                        "' is on the runner's /tmp, a tmpfs that forgectl cannot copy out (Docker's archive API "
                        "does not read tmpfs mounts); have the agent write it in the workspace or under /logs/artifacts");
    } else {
      a.source = *source;
      if (a.source.empty()) a.source = ".";  // "./": the workspace itself
      a.destination = *dest;
      out.push_back(std::move(a));
    }
  }
  return out;
}

}  // namespace forge::manifest
