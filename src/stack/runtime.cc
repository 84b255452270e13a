// Runtime choice and its preflight.
#include "stack/runtime.h"

#include <algorithm>

namespace forge::stack {

namespace {

std::string basename_of(std::string_view path) {
  const auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string usual_path(std::string_view name) {
  if (name == "runsc") return "/usr/local/bin/runsc";  // scripts/install-runsc.sh puts it there
  if (name == "crun") return "/usr/bin/crun";          // Debian's crun package
  return "/usr/bin/" + std::string(name);
}

std::string listed(const engine::SystemInfo& info) {
  std::string s;
  for (const auto& [name, _] : info.runtimes) s += (s.empty() ? "" : ", ") + name;
  return s.empty() ? "none" : s;
}

}  // namespace

RuntimeKind runtime_kind(std::string_view name, const engine::RuntimeInfo& registered) {
  // The binary decides what it is; the name is only what daemon.json calls it.
  const std::string bin = registered.path.empty() ? std::string(name) : basename_of(registered.path);
  for (const std::string& n : {bin, std::string(name)}) {
    if (n == "runsc") return RuntimeKind::kRunsc;
    if (n == "crun") return RuntimeKind::kCrun;
    if (n == "runc" || n == "io.containerd.runc.v2" || n == "io.containerd.runtime.v1.linux") return RuntimeKind::kRunc;
  }
  return RuntimeKind::kOther;
}

std::string runtime_unfit(std::string_view name, const engine::RuntimeInfo& registered, const engine::SystemInfo& info,
                          const RuntimeNeeds& needs) {
  const RuntimeKind kind = runtime_kind(name, registered);
  if (kind == RuntimeKind::kCrun && needs.limits && info.cgroup_version != "2")
    return "crun cannot apply a sandbox's limits on this host: the daemon runs cgroup v" + info.cgroup_version +
           " and crun refuses limits there (\"cgroups in hybrid mode not supported\"); use runc or runsc, or a "
           "cgroup v2 host";
  const bool no_network =
      std::find(registered.args.begin(), registered.args.end(), "--network=none") != registered.args.end();
  if (kind == RuntimeKind::kRunsc && needs.network && no_network)
    return "runsc is registered with --network=none, so its sandboxes cannot reach their services; register it "
           "without that argument";
  return {};
}

std::string runtime_snippet(std::string_view name) {
  return "register it in /etc/docker/daemon.json:\n  {\"runtimes\": {\"" + std::string(name) + "\": {\"path\": \"" +
         usual_path(name) + "\"}}}\nthen apply it without a restart: kill -HUP $(pidof dockerd)" +
         (name == "runsc" ? " (runsc itself: scripts/install-runsc.sh)" : "");
}

Result<RuntimeChoice> choose_runtime(std::string_view requested, const engine::SystemInfo& info,
                                     const RuntimeNeeds& needs) {
  if (auto bad = manifest::runtime_name_problem(requested); !bad.empty()) return fail(Errc::kInvalid, bad);
  const bool is_auto = manifest::is_auto_runtime(requested);
  const std::string name =
      is_auto ? (info.default_runtime.empty() ? "runc" : info.default_runtime) : std::string(requested);
  auto it = info.runtimes.find(name);
  if (it == info.runtimes.end()) {
    // An old daemon without Runtimes in /info: its default is all it can be asked for.
    if (is_auto) return RuntimeChoice{name, false};
    return fail(Errc::kInvalid, "runtime '" + name + "': the daemon does not have it (it lists " + listed(info) +
                                    "); " + runtime_snippet(name));
  }
  if (auto why = runtime_unfit(name, it->second, info, needs); !why.empty())
    return fail(Errc::kInvalid, "runtime '" + name + "'" + (is_auto ? " (the daemon's default)" : "") + ": " + why);
  return RuntimeChoice{name, !is_auto};
}

}  // namespace forge::stack
