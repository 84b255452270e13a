// task.toml's [agent], [verifier] and [environment] tables (also a step's and a separate
// verifier's): every key Harbor reads, typed, with what forgectl cannot honour refused.
#include <algorithm>
#include <cctype>

#include "manifest/harbor/harbor_reader.h"
#include "manifest/mcp_url.h"

namespace forge::manifest {

namespace {

constexpr std::int64_t kMaxCpus = 512;
constexpr std::int64_t kMaxMegabytes = std::int64_t{1} << 32;  // 4 PiB of MiB: a typo, not a task
// The separate verifier's memory is exactly its memory_mb; below this its own parts (the init, the
// as-agent service, the tests' shell) cannot start, which no trial could be blamed for.
constexpr std::int64_t kMinVerifierMemoryMb = 32;

std::optional<std::int64_t> positive(TomlReader& r, const TomlField& f, std::string_view table, std::int64_t max) {
  auto v = r.integer(f, table);
  if (v && (*v <= 0 || *v > max)) {
    r.error(f,
            toml_subject(table, f.key) + " must be from 1 to " + std::to_string(max) + ", got " + std::to_string(*v));
    return std::nullopt;
  }
  return v;
}

// Older files' memory = "2G" / storage = "10G": Harbor's size strings, in MiB.
std::optional<std::int64_t> size_mb(TomlReader& r, const TomlField& f, std::string_view table) {
  auto s = r.string(f, table);
  if (!s) return std::nullopt;
  std::string t = *s;
  t.erase(0, t.find_first_not_of(' '));
  t.erase(t.find_last_not_of(' ') + 1);
  char unit = t.empty() ? '\0' : static_cast<char>(std::toupper(static_cast<unsigned char>(t.back())));
  double scale = unit == 'G' ? 1024 : unit == 'M' ? 1 : unit == 'K' ? 1.0 / 1024 : 0;
  std::size_t used = 0;
  double v = 0;
  try {
    if (scale > 0) v = std::stod(t.substr(0, t.size() - 1), &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (scale == 0 || used == 0 || used != t.size() - 1 || v <= 0 || v * scale > static_cast<double>(kMaxMegabytes)) {
    r.error(f, toml_subject(table, f.key) + " must be a size like \"512M\" or \"2G\", got '" + *s + "'",
            "or write " + f.key + "_mb as a number of MiB");
    return std::nullopt;
  }
  return static_cast<std::int64_t>(v * scale);
}

const std::vector<std::string> kAgentKeys = {"timeout_sec", "user", "network_mode", "allowed_hosts"};
const std::vector<std::string> kVerifierKeys = {"timeout_sec",  "env",           "user",
                                                "network_mode", "allowed_hosts", "environment_mode",
                                                "environment",  "continuous",    "collect"};
const std::vector<std::string> kEnvironmentKeys = {"build_timeout_sec",
                                                   "docker_image",
                                                   "os",
                                                   "cpus",
                                                   "cpu",
                                                   "memory_mb",
                                                   "storage_mb",
                                                   "memory",
                                                   "storage",
                                                   "gpus",
                                                   "gpu_types",
                                                   "tpu",
                                                   "allow_internet",
                                                   "network_mode",
                                                   "allowed_hosts",
                                                   "mcp_servers",
                                                   "env",
                                                   "skills_dir",
                                                   "healthcheck",
                                                   "workdir"};

std::vector<McpServer> read_mcp_servers(TomlReader& r, const TomlField& f, std::string_view table) {
  std::vector<McpServer> out;
  for (const auto& item : r.items(f, table, kMaxMcpServers)) {
    const std::string where = toml_path(table, item.key);
    McpServer m;
    TomlField url_field = item;
    std::string transport = "sse";  // Harbor's default
    bool ok = true;
    for (const auto& e : r.entries(item, where)) {
      if (e.key == "name" || e.key == "transport" || e.key == "url" || e.key == "command") {
        if (e.key == "url") {
          url_field = e;
          m.url_where = SourceLocation{r.file(), e.line, e.column};
        }
        auto v = r.string(e, where);
        ok = ok && v;
        if (v) (e.key == "name" ? m.name : e.key == "transport" ? transport : e.key == "url" ? m.url : m.command) = *v;
      } else if (e.key == "args") {
        auto v = r.strings(e, where, kMaxListItems);
        ok = ok && v;
        if (v) m.args = *v;
      } else {
        r.unknown_key(e, where, {"name", "transport", "url", "command", "args"});
      }
    }
    if (!ok) continue;
    if (m.name.empty()) r.error(item, "[" + where + "] needs a 'name'");
    if (transport == "stdio") {
      m.transport = McpTransport::kStdio;
      if (m.command.empty()) r.error(item, "[" + where + "] needs a 'command' for transport \"stdio\"");
    } else if (transport == "sse" || transport == "streamable-http" || transport == "http") {
      m.transport = transport == "sse" ? McpTransport::kSse : McpTransport::kStreamableHttp;
      if (m.url.empty()) {
        r.error(item, "[" + where + "] needs a 'url' for transport \"" + transport + "\"",
                "the server is a service of environment/docker-compose.yaml: url = \"http://<service>:<port>/<path>\"");
      } else if (auto u = parse_mcp_url(m.url); !u) {
        r.error(url_field, "[" + where + "] 'url' = \"" + m.url + "\": " + u.error().message);
        continue;
      }
    } else {
      r.error(item,
              "[" + where + "] transport must be \"stdio\", \"sse\" or \"streamable-http\", got '" + transport + "'");
    }
    if (m.name.empty()) continue;
    const bool named_twice =
        std::any_of(out.begin(), out.end(), [&](const McpServer& o) { return o.name == m.name; });
    const bool second_stdio = m.transport == McpTransport::kStdio &&
                              std::any_of(out.begin(), out.end(), [](const McpServer& o) { return o.transport == McpTransport::kStdio; });
    if (named_twice)
      r.error(item, "[" + where + "] MCP server '" + m.name + "' is declared twice");
    else if (second_stdio)
      r.error(item, "[" + where + "] MCP server '" + m.name + "': forgectl runs one stdio server per task",
              "serve the others over HTTP from a service of environment/docker-compose.yaml (transport = \"sse\")");
    else
      out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

void read_agent(TomlReader& r, const TomlField& f, std::string_view table, AgentConfig& into) {
  NetworkKeys net;
  for (const auto& e : r.entries(f, table)) {
    if (net.take(e)) continue;
    if (e.key == "timeout_sec") {
      if (auto v = read_seconds(r, e, table)) into.timeout_sec = v;
    } else if (e.key == "user") {
      if (auto v = r.user(e, table)) into.user = *v;
    } else {
      r.unknown_key(e, table, kAgentKeys);
    }
  }
  if (auto p = read_network(r, net, table)) into.network = p;
}

void read_verifier(TomlReader& r, const TomlField& f, std::string_view table, VerifierConfig& into) {
  NetworkKeys net;
  std::optional<TomlField> mode, environment;
  for (const auto& e : r.entries(f, table)) {
    const std::string where = toml_path(table, e.key);
    if (net.take(e)) continue;
    if (e.key == "timeout_sec") {
      if (auto v = read_seconds(r, e, table)) into.timeout_sec = *v;
    } else if (e.key == "env") {
      into.env = read_env(r, e, table);
    } else if (e.key == "user") {
      if (auto v = r.user(e, table)) into.user = *v;
    } else if (e.key == "environment_mode") {
      mode = e;
    } else if (e.key == "environment") {
      environment = e;
    } else if (e.key == "continuous") {
      // Verifying submissions while the agent works needs a second container forgectl does not run.
      bool enabled = false;
      for (const auto& c : r.entries(e, where))
        if (c.key == "enabled") enabled = r.boolean(c, where).value_or(false);
      if (enabled)
        r.error(e, "[" + where + "] continuous verification is not supported", {}, TomlAt::kKey);
      else
        r.warning(e, "[" + where + "] has no effect: continuous verification is not enabled");
    } else if (e.key == "collect") {
      into.collect.clear();
      for (const auto& item : r.items(e, table, kMaxListItems)) {
        const std::string iw = toml_path(table, item.key);
        CollectHook h;
        h.where = SourceLocation{r.file(), item.line, item.column};
        for (const auto& k : r.entries(item, iw)) {
          if (k.key == "command" || k.key == "service") {
            if (auto v = r.string(k, iw)) (k.key == "command" ? h.command : h.service) = *v;
          } else if (k.key == "timeout_sec") {
            if (auto v = read_seconds(r, k, iw)) h.timeout_sec = *v;
          } else if (k.key == "user") {
            if (auto v = r.user(k, iw)) h.user = *v;
          } else {
            r.unknown_key(k, iw, {"command", "service", "timeout_sec", "user"});
          }
        }
        if (h.command.empty())
          r.error(item, "[" + iw + "] needs a 'command'");
        else
          into.collect.push_back(std::move(h));
      }
    } else {
      r.unknown_key(e, table, kVerifierKeys);
    }
  }
  if (auto p = read_network(r, net, table)) into.network = p;
  if (environment) {
    EnvironmentConfig env;
    read_environment(r, *environment, toml_path(table, "environment"), env, true);
    into.environment = std::move(env);
  }
  if (mode) {
    auto m = r.string(*mode, table);
    if (m && *m == "shared") {
      into.mode = VerifierMode::kShared;
      if (environment)
        r.error(*mode,
                toml_subject(table, "environment_mode") + " \"shared\" cannot have a [" +
                    toml_path(table, "environment") + "]",
                "set environment_mode = \"separate\", or remove the verifier's environment");
    } else if (m && *m == "separate") {
      into.mode = VerifierMode::kSeparate;
    } else if (m) {
      std::string close = closest_match(*m, {"shared", "separate"});
      r.error(*mode, toml_subject(table, "environment_mode") + " must be \"shared\" or \"separate\", got '" + *m + "'",
              close.empty() ? "" : "did you mean '" + close + "'?");
    }
  } else if (environment) {
    into.mode = VerifierMode::kSeparate;  // Harbor: an environment of its own implies separate
  }
}

void read_environment(TomlReader& r, const TomlField& f, std::string_view table, EnvironmentConfig& into,
                      bool verifier_env) {
  NetworkKeys net;
  std::optional<TomlField> cpus, cpu, memory, memory_mb, storage, storage_mb, gpu_types;
  for (const auto& e : r.entries(f, table)) {
    const std::string where = toml_path(table, e.key);
    if (net.take(e)) continue;
    if (e.key == "allow_internet") {
      net.allow_internet = e;
    } else if (e.key == "build_timeout_sec") {
      if (auto v = read_seconds(r, e, table)) into.build_timeout_sec = *v;
    } else if (e.key == "docker_image") {
      auto v = r.string(e, table);
      if (v && v->empty())
        r.error(e, toml_subject(table, e.key) + " is empty");
      else if (v && verifier_env)
        r.error(e, toml_subject(table, e.key) + ": a verifier image of its own is not supported yet",
                "the separate verifier runs in a fresh container of the task's own image");
      else if (v)
        into.docker_image = *v;
    } else if (e.key == "os") {
      auto v = r.string(e, table);
      std::string os = v.value_or("");
      std::transform(os.begin(), os.end(), os.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (v && os == "windows")
        r.error(e, toml_subject(table, e.key) + ": Windows containers are not supported");
      else if (v && os != "linux")
        r.error(e, toml_subject(table, e.key) + " must be \"linux\" or \"windows\", got '" + *v + "'");
    } else if (e.key == "cpus") {
      cpus = e;
      if (auto v = positive(r, e, table, kMaxCpus)) into.cpus = v;
    } else if (e.key == "cpu") {
      cpu = e;  // older files' spelling
    } else if (e.key == "memory_mb") {
      memory_mb = e;
      if (auto v = positive(r, e, table, kMaxMegabytes)) into.memory_mb = v;
    } else if (e.key == "storage_mb") {
      storage_mb = e;
      if (auto v = positive(r, e, table, kMaxMegabytes)) into.storage_mb = v;
    } else if (e.key == "memory") {
      memory = e;
    } else if (e.key == "storage") {
      storage = e;
    } else if (e.key == "gpus") {
      auto v = r.integer(e, table);
      if (v && *v > 0)
        r.error(e, toml_subject(table, e.key) + " = " + std::to_string(*v) + ": forgectl runs no GPUs",
                "run this task where Harbor has a GPU provider");
      else if (v && *v < 0)
        r.error(e, toml_subject(table, e.key) + " must not be negative");
    } else if (e.key == "gpu_types") {
      gpu_types = e;
    } else if (e.key == "tpu") {
      r.error(e, "[" + where + "] TPUs are not supported", {}, TomlAt::kKey);
    } else if (e.key == "mcp_servers") {
      into.mcp_servers = read_mcp_servers(r, e, table);
      if (verifier_env && !into.mcp_servers.empty())
        r.warning(e, toml_subject(table, e.key) + " has no effect: no agent runs in the verifier's environment");
    } else if (e.key == "env") {
      into.env = read_env(r, e, table);
    } else if (e.key == "skills_dir") {
      if (r.string(e, table))
        r.warning(e, toml_subject(table, e.key) + " has no effect: forgectl's agents have no skills directory");
    } else if (e.key == "healthcheck") {
      into.healthcheck = read_healthcheck(r, e, table);
      // The verifier's container runs no services to wait for: the tests start once it is up.
      if (verifier_env && into.healthcheck)
        r.warning(e, "[" + where + "] has no effect: forgectl does not run a healthcheck in the verifier's container");
    } else if (e.key == "workdir") {
      auto v = r.string(e, table);
      const auto normal = v ? normal_path(*v) : std::nullopt;
      if (v && (v->empty() || v->front() != '/'))
        r.error(e, toml_subject(table, e.key) + " must be an absolute path");
      else if (v && !verifier_env && (!normal || !reserved_verifier_path(*normal).empty()))
        // The workspace copy is the agent's in the verifier's container: there it would own the
        // reward directory or the tests.
        r.error(e,
                toml_subject(table, e.key) + " = \"" + *v + "\" " +
                    (normal ? "is, holds or lies inside " + reserved_verifier_path(*normal) +
                                  ", which the verifier's container keeps for forgectl and the tests"
                            : "must not contain '..'"),
                "the workspace is copied into the verifier's container owned by the agent; work in /app or /work");
      else if (v && verifier_env)
        r.warning(e, toml_subject(table, e.key) + " has no effect: the tests run in the agent's workspace copy",
                  "the workspace is [environment]'s workdir");
      else if (v)
        into.workdir = *v;
    } else {
      r.unknown_key(e, table, kEnvironmentKeys);
    }
  }
  if (cpu && cpus) {
    r.error(*cpu, toml_subject(table, "cpu") + " and 'cpus' are both given", "keep 'cpus'", TomlAt::kKey);
  } else if (cpu) {
    if (auto v = positive(r, *cpu, table, kMaxCpus)) into.cpus = v;
  }
  // Harbor reads the deprecated size strings into the _mb fields, refusing a conflict.
  for (auto [field, target] : {std::pair{&memory, &into.memory_mb}, std::pair{&storage, &into.storage_mb}}) {
    if (!*field) continue;
    auto v = size_mb(r, **field, table);
    if (v && *target && *v != **target)
      r.error(**field, toml_subject(table, (*field)->key) + " (" + std::to_string(*v) + " MiB) disagrees with '" +
                           (*field)->key + "_mb' (" + std::to_string(**target) + ")");
    else if (v)
      *target = v;
  }
  if (verifier_env && into.memory_mb && *into.memory_mb < kMinVerifierMemoryMb) {
    const TomlField& at = memory_mb ? *memory_mb : *memory;
    r.error(at,
            toml_subject(table, at.key) + " = " + std::to_string(*into.memory_mb) + " MiB is below forgectl's " +
                std::to_string(kMinVerifierMemoryMb) + " MiB for the verifier's container",
            "the verifier's own processes need that much before the tests run; give memory_mb of at least " +
                std::to_string(kMinVerifierMemoryMb));
  }
  if (gpu_types && r.strings(*gpu_types, table, kMaxListItems))
    r.warning(*gpu_types, toml_subject(table, "gpu_types") + " has no effect: the task asks for no GPU");
  // The task's own storage_mb is the workspace's cap (runner.disk_mb, docs/harbor.md "Running a
  // task"); the verifier's container has no disk cap of its own.
  if (verifier_env && into.storage_mb && (storage_mb || storage))
    r.warning(storage_mb ? *storage_mb : *storage,
              toml_subject(table, storage_mb ? "storage_mb" : "storage") +
                  " has no effect: the verifier's container has no disk cap of its own",
              "the task's [environment] storage_mb caps the workspace");
  if (auto p = read_network(r, net, table)) {
    into.network = *p;
    into.network_set = true;
  }
}

}  // namespace forge::manifest
