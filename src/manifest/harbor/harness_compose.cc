// Harbor's and Terminal-Bench's compose files: their variables and plumbing taken out, then read by
// the compose subset's own parser, so every other key gets the same checks as a Tolokaforge task's.
#include "manifest/harbor/harness_compose.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "manifest/compose_document.h"
#include "manifest/yaml_reader.h"

namespace forge::manifest {

namespace {

// What a harness puts into the compose files it runs.
struct Plumbing {
  Interpolation vars;
  std::vector<std::string> name_vars;       // image and container names the harness picks
  std::vector<std::string> host_path_vars;  // host directories it mounts to collect logs
};

Plumbing plumbing_for(const HarnessCompose& h) {
  Plumbing p;
  p.vars.defaults = true;
  if (h.harness == Harness::kHarbor) {
    // Harbor's DockerEnvironmentEnvVars; forgectl provides /tests and /logs/* itself.
    p.vars.values = {{"CONTEXT_DIR", "."},
                     {"TEST_DIR", "/tests"},
                     {"ENV_VERIFIER_LOGS_PATH", "/logs/verifier"},
                     {"ENV_AGENT_LOGS_PATH", "/logs/agent"},
                     {"ENV_ARTIFACTS_PATH", "/logs/artifacts"},
                     {"CPUS", std::to_string(h.cpus.value_or(1))},
                     {"MEMORY", h.memory_mb ? std::to_string(*h.memory_mb) + "M" : std::string("1G")},
                     {"NETWORK_MODE", "bridge"}};
    p.name_vars = {"MAIN_IMAGE_NAME", "PREBUILT_IMAGE_NAME"};
    p.host_path_vars = {"HOST_VERIFIER_LOGS_PATH", "HOST_AGENT_LOGS_PATH", "HOST_ARTIFACTS_PATH"};
  } else {
    // Terminal-Bench 1's DockerComposeEnvVars (the T_BENCH_ prefix is part of every name).
    p.vars.values = {{"T_BENCH_TEST_DIR", "/tests"},
                     {"T_BENCH_CONTAINER_LOGS_PATH", "/logs"},
                     {"T_BENCH_CONTAINER_AGENT_LOGS_PATH", "/agent-logs"}};
    p.name_vars = {"T_BENCH_TASK_DOCKER_CLIENT_IMAGE_NAME", "T_BENCH_TASK_DOCKER_CLIENT_CONTAINER_NAME",
                   "T_BENCH_TASK_DOCKER_NAME_PREFIX"};
    p.host_path_vars = {"T_BENCH_TASK_LOGS_PATH", "T_BENCH_TASK_AGENT_LOGS_PATH"};
  }
  return p;
}

// Whether `raw` refers to any of `vars` as ${NAME}, ${NAME:-…} or $NAME.
bool mentions(const std::string& raw, const std::vector<std::string>& vars) {
  return std::any_of(vars.begin(), vars.end(), [&](const std::string& v) {
    for (const std::string& form : {"${" + v + "}", "${" + v + ":", "${" + v + "-"})
      if (raw.find(form) != std::string::npos) return true;
    std::size_t at = raw.find("$" + v), after = at + v.size() + 1;
    return at != std::string::npos &&
           (after == raw.size() || !(std::isalnum(static_cast<unsigned char>(raw[after])) || raw[after] == '_'));
  });
}

std::optional<YAML::Node> child(const YAML::Node& map, const std::string& key) {
  if (!map.IsMap()) return std::nullopt;
  for (const auto& kv : map)
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.second;
  return std::nullopt;
}

std::string scalar(const std::optional<YAML::Node>& n) { return n && n->IsScalar() ? n->Scalar() : std::string(); }

// Every scalar under `n`, to tell a block written only of harness variables from one with values.
void scalars(const YAML::Node& n, std::vector<std::string>& out, int depth = 0) {
  if (depth > 8) return;
  if (n.IsScalar()) out.push_back(n.Scalar());
  if (n.IsSequence())
    for (const auto& item : n) scalars(item, out, depth + 1);
  if (n.IsMap())
    for (const auto& kv : n) scalars(kv.second, out, depth + 1);
}

// "${HOST_AGENT_LOGS_PATH}:/logs/agent" → "${HOST_AGENT_LOGS_PATH}": a short volume's source.
std::string volume_source(const YAML::Node& item) {
  if (item.IsMap()) return scalar(child(item, "source"));
  if (!item.IsScalar()) return {};
  const std::string& s = item.Scalar();
  if (s.rfind("${", 0) == 0) {
    std::size_t close = s.find('}');
    return close == std::string::npos ? s : s.substr(0, close + 1);
  }
  return s.substr(0, s.find(':'));
}

class Stripper {
 public:
  Stripper(YamlReader& r, const HarnessCompose& h, const Plumbing& p) : r_(r), h_(h), p_(p) {}

  void service(const YAML::Node& key, YAML::Node svc) {
    if (!svc.IsMap() || !key.IsScalar()) return;
    const std::string name = key.Scalar();
    const bool primary = name == h_.primary;
    if (mentions(scalar(child(svc, "container_name")), p_.name_vars)) svc.remove("container_name");
    volumes(svc);
    if (primary) {
      main_image(key, svc);
      harbor_limits(key, name, svc);
    } else if (child(svc, "build") && mentions(scalar(child(svc, "image")), p_.name_vars)) {
      svc.remove("image");  // forgectl names the images it builds
    }
  }

 private:
  void warn(const YAML::Node& at, std::string message, std::string hint = {}) {
    Field f{"", at, at.Mark(), at.Mark()};
    SourceLocation loc = r_.location(f);
    r_.diagnostics().add(
        Diagnostic{loc.file, loc.line, loc.column, std::move(message), std::move(hint), Severity::kWarning});
  }

  // The harness's log mounts go; any other volume stays, for the subset to refuse.
  void volumes(YAML::Node svc) {
    auto v = child(svc, "volumes");
    if (!v || !v->IsSequence()) return;
    YAML::Node kept(YAML::NodeType::Sequence);
    for (const auto& item : *v)
      if (!mentions(volume_source(item), p_.host_path_vars)) kept.push_back(item);
    if (kept.size() == 0)
      svc.remove("volumes");
    else if (kept.size() != v->size())
      svc["volumes"] = kept;
  }

  // Harbor builds environment/Dockerfile for main, or runs [environment].docker_image.
  void main_image(const YAML::Node& key, YAML::Node svc) {
    if (!h_.docker_image.empty()) {
      if (child(svc, "build")) {
        warn(key, "service '" + h_.primary + "': 'build' is not used: [environment].docker_image is the image",
             "as in Harbor, a prebuilt image replaces the build");
        svc.remove("build");
      }
      svc["image"] = h_.docker_image;
      return;
    }
    if (mentions(scalar(child(svc, "image")), p_.name_vars)) svc.remove("image");
    if (!child(svc, "build") && !child(svc, "image") && h_.has_dockerfile) svc["build"] = ".";
  }

  // Harbor's resource limits and network mode on main; task.toml sets both.
  void harbor_limits(const YAML::Node& key, const std::string& name, YAML::Node svc) {
    if (h_.harness != Harness::kHarbor) return;
    if (auto deploy = child(svc, "deploy");
        deploy && deploy->IsMap() && deploy->size() == 1 && child(*deploy, "resources")) {
      std::vector<std::string> values;
      scalars(*deploy, values);
      bool templated = std::all_of(values.begin(), values.end(),
                                   [](const std::string& s) { return s == "${CPUS}" || s == "${MEMORY}"; });
      if (!templated) {
        warn(key, "service '" + name + "': 'deploy.resources' is not used",
             "the limits come from task.toml's [environment] cpus and memory_mb");
      }
      svc.remove("deploy");
    }
    std::string mode = scalar(child(svc, "network_mode"));
    if (mode == "bridge" || mode == "${NETWORK_MODE}" || mode.rfind("${NETWORK_MODE:-", 0) == 0) {
      svc.remove("network_mode");  // forgectl's network posture comes from task.toml
    }
  }

  YamlReader& r_;
  const HarnessCompose& h_;
  const Plumbing& p_;
};

}  // namespace

ComposeFile read_harness_compose(std::string_view text, const std::string& path, const HarnessCompose& h,
                                 Diagnostics& diags) {
  const Plumbing p = plumbing_for(h);
  YamlReader r(path, diags, Dollars::kCompose);
  r.set_interpolation(&p.vars);
  auto root = r.parse(text);
  if (!root) return ComposeFile{path, {}, {}};
  if (auto services = child(root->node, "services"); services && services->IsMap()) {
    Stripper strip(r, h, p);
    for (const auto& kv : *services) strip.service(kv.first, kv.second);
  }
  ComposeFile file = read_compose_document(r, *root, path);
  if (!file.services.empty() && !file.find(h.primary)) {
    std::vector<std::string> names;
    for (const auto& s : file.services) names.push_back(s.name);
    std::string close = closest_match(h.primary, names);
    diags.add(Diagnostic{
        path, 0, 0, "the compose file has no service '" + h.primary + "', the agent's container",
        close.empty() ? "name the service the agent works in '" + h.primary + "'" : "did you mean '" + close + "'?"});
  }
  return file;
}

}  // namespace forge::manifest
