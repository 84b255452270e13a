// Harbor and Terminal-Bench 1 tasks described as TaskConfigs: what the sweep needs of every task,
// and the agent's stack, from the HarborTask the loaders read.
#include "manifest/harbor/harbor_load.h"

#include <algorithm>
#include <filesystem>

#include "manifest/files.h"
#include "manifest/harbor/harbor_parse.h"
#include "manifest/harbor/tb1_parse.h"
#include "manifest/mcp_url.h"
#include "manifest/task_kind.h"

namespace forge::manifest {

namespace fs = std::filesystem;

NetworkPolicy harbor_posture(NetworkMode m) {
  switch (m) {
    case NetworkMode::kPublic: return NetworkPolicy::kFullInternet;
    case NetworkMode::kNoNetwork: return NetworkPolicy::kNoInternet;
    case NetworkMode::kAllowlist: return NetworkPolicy::kLimitedInternet;
  }
  return NetworkPolicy::kNoInternet;
}

const HarborNetwork& agent_network(const HarborTask& t, const StepConfig* step) {
  if (step && step->agent.network) return *step->agent.network;
  if (t.agent.network) return *t.agent.network;
  return t.environment.network;
}

const HarborNetwork& verifier_network(const HarborTask& t, const StepConfig* step) {
  if (step && step->verifier.network) return *step->verifier.network;
  if (t.verifier.network) return *t.verifier.network;
  // A step's [steps.verifier.environment] is its own, else the task's (read over a copy of it).
  const auto& ve = step ? step->verifier.environment : t.verifier.environment;
  if (ve && ve->network_set) return ve->network;
  return t.environment.network;
}

bool shared_verifier_applies(const HarborTask& t) {
  if (t.steps.empty()) return t.verifier.mode == VerifierMode::kShared;
  for (const auto& s : t.steps)
    if (s.verifier.mode == VerifierMode::kShared) return true;
  return false;
}

const std::vector<std::string>& harbor_agent_tools() {
  static const std::vector<std::string> tools = {"bash",          "read_file",  "write_file", "append_file",
                                                 "list_dir",      "replace_lines", "move_file", "copy_file",
                                                 "delete_file",   "grep_workspace"};
  return tools;
}

std::string harbor_system_prompt(const std::string& workdir) {
  return "You are an autonomous agent working in a Linux container. Your working directory is " + workdir +
         ". Complete the task the user gives you by running commands and editing files with your tools; "
         "nobody will answer questions. Tests check the result after you finish. When the task is done, "
         "reply with a short summary and no tool call.";
}

namespace {

// "root" as the ids the runner spec takes; other names and ids as written (Docker resolves names).
std::string runner_user(const std::string& user) { return user == "root" ? "0:0" : user; }

std::string where(const HarborTask& t) { return t.config_path; }

}  // namespace

Result<TaskConfig> load_harbor_task_config(const std::string& path) {
  std::string dir = path;
  if (file_kind(path) == FileKind::kFile) dir = fs::path(path).parent_path().string();
  auto kind = detect_task_kind(dir);
  if (!kind) return kind.fail();
  Result<HarborTask> loaded = *kind == TaskKind::kHarbor           ? load_harbor_task(dir)
                              : *kind == TaskKind::kTerminalBench1 ? load_tb1_task(dir)
                                                                   : Result<HarborTask>(fail(
                                                                         Errc::kNotFound, "'" + dir + "' holds no Harbor or Terminal-Bench 1 task"));
  if (!loaded) return loaded.fail();
  auto h = std::make_shared<HarborTask>(std::move(*loaded));

  TaskConfig t;
  t.task_id = h->id;
  t.name = h->name.empty() ? h->id : h->name;
  t.category = h->category;
  t.description = h->description;
  t.dir = h->dir;
  t.path = h->config_path;
  t.adapter_type = h->format == HarborFormat::kHarbor ? "harbor" : "terminal-bench-1";
  t.initial_user_message = h->instruction;
  t.system_prompt_source = PromptSource::kAdapter;
  t.tags = h->tags;
  t.system_prompt = harbor_system_prompt(h->environment.workdir.empty() ? "/work" : h->environment.workdir);
  t.complexity = h->difficulty;
  t.grading.path = h->config_path;
  t.solution.declared = !h->files.solution_script.empty() ||
                        std::any_of(h->steps.begin(), h->steps.end(),
                                    [](const StepConfig& st) { return !st.solution_script.empty(); });
  // No user: the episode ends when the agent answers without a tool call.
  t.user_simulator.mode = UserSimulatorConfig::Mode::kScripted;
  t.user_simulator.scripted_flow.push_back({"", "###STOP###", true});  // agent/agent.h's kStopMarker

  LoadedEnvironment& env = t.environment;
  env.source = h->config_path;
  env.task_id = h->id;
  env.base_dir = h->dir;
  EnvironmentManifest& m = env.manifest;
  m.path = h->config_path;
  m.where = SourceLocation{h->config_path, 0, 0};
  m.stack = "none";
  const HarborNetwork& net = agent_network(*h, h->steps.empty() ? nullptr : &h->steps.front());
  m.network_policy = harbor_posture(net.mode);
  m.allowlist = net.allowed_hosts;
  // Steps whose agent networks differ: the runner moves before each step's agent, and the proxy
  // and resolver take the step's allowlist; `allowlist` is the first allowlist step's.
  for (const auto& st : h->steps) {
    const HarborNetwork& sn = agent_network(*h, &st);
    const bool listed = sn.mode == NetworkMode::kAllowlist;
    m.step_network_policies.push_back(harbor_posture(sn.mode));
    m.step_allowlists.push_back(listed ? sn.allowed_hosts : std::vector<std::string>{});
    if (listed && net.mode != NetworkMode::kAllowlist && m.allowlist.empty()) m.allowlist = sn.allowed_hosts;
  }
  if (!runner_changes_network(m)) m.step_network_policies.clear(), m.step_allowlists.clear();

  RunnerSpec& runner = m.runner;
  runner.image = h->environment.docker_image;
  runner.workdir = h->environment.workdir;
  runner.user = runner_user(h->agent.user);
  if (h->environment.cpus) runner.resources.cpus = static_cast<double>(*h->environment.cpus);
  if (h->environment.memory_mb) runner.resources.memory = *h->environment.memory_mb << 20;
  if (const auto& mb = h->environment.storage_mb) {
    if (*mb < kMinDiskMb || *mb > kMaxDiskMb)
      return fail(Errc::kInvalid, where(*h) + ": [environment] storage_mb = " + std::to_string(*mb) +
                                      ": forgectl caps the workspace at " + std::to_string(kMinDiskMb) + " to " +
                                      std::to_string(kMaxDiskMb) + " MiB (runner.disk_mb)");
    runner.disk_mb = *mb;
  }

  // A compose file's `main` is the runner; its other services are the stack's services.
  if (h->compose) {
    env.compose.path = h->compose->path;
    env.compose.networks = h->compose->networks;
    for (const auto& s : h->compose->services) {
      if (s.name == h->main_service) {
        if (runner.image.empty() && !s.build) runner.image = s.image;
        if (runner.image.empty() && s.build) {
          runner.build = s.build;
          // TB1's context is the task directory: its tests and solution stay out of the image.
          if (h->format == HarborFormat::kTerminalBench1 && fs::path(s.build->context) == fs::path(h->dir))
            runner.build->exclude = {"tests", "solution.sh", "run-tests.sh"};
        }
        if (runner.workdir.empty()) runner.workdir = s.working_dir;
        if (runner.user.empty()) runner.user = runner_user(s.user);
        runner.env = s.environment;
        continue;
      }
      ComposeService svc = s;
      svc.depends_on.erase(h->main_service);  // the runner starts last, after every service
      env.compose.services.push_back(std::move(svc));
    }
  }

  // Harbor's contract: no workdir given is the image's WORKDIR (TB2 tasks keep everything in /app).
  runner.workdir_from_image = runner.workdir.empty();

  // environment/Dockerfile alone: built from environment/ (TB1: from the task directory, its
  // tests and solution left out of the context so no COPY can bake them into the image).
  if (runner.image.empty() && !runner.build && !h->files.dockerfile.empty()) {
    ComposeBuild b;
    b.context = h->files.environment_dir;
    b.dockerfile = fs::path(h->files.dockerfile).filename().string();
    if (h->format == HarborFormat::kTerminalBench1) b.exclude = {"tests", "solution.sh", "run-tests.sh"};
    runner.build = std::move(b);
  }
  if (runner.image.empty() && !runner.build)
    return fail(Errc::kInvalid, where(*h) + ": the task gives no image for its agent's container (no docker_image, "
                                            "no environment/Dockerfile, no image or build for '" + h->main_service + "')");

  // The oracle's one tool call: the solution is copied to /solution when its agent phase starts.
  // A multi-step task's oracle makes the same call at each step, on that step's solution.
  bool any_step_solution = false;
  for (const auto& st : h->steps) any_step_solution = any_step_solution || !st.solution_script.empty();
  if (!h->files.solution_script.empty() || any_step_solution) {
    GoldenAction run;
    run.name = "bash";
    // Harbor runs solve.sh with bash; an image without bash (busybox) gets sh.
    const std::string script = h->format == HarborFormat::kHarbor ? "/solution/solve.sh" : "/solution/solution.sh";
    // [solution].env, resolved on the host, waits in a file beside it (trial/harbor_trial.h).
    run.arguments_json =
        "{\"command\":\"if [ -f /solution/.forgectl-env ]; then set -a; . /solution/.forgectl-env; "
        "set +a; fi; if command -v bash >/dev/null 2>&1; then bash " +
        script + "; else sh " + script + "; fi\"}";
    t.solution.tool_calls.push_back(std::move(run));
  }

  ToolsConfig& tools = env.tools;
  tools.declared = true;
  tools.agent_enabled = harbor_agent_tools();
  tools.where = SourceLocation{h->config_path, 0, 0};
  // Harbor's agent gets every tool of the servers the task declares (one stdio server at most:
  // harbor_sections.cc), under the same governance as the built-ins.
  tools.mcp_tools_for_agent = true;
  for (const McpServer& s : h->environment.mcp_servers) {
    if (s.transport == McpTransport::kStdio) {
      McpServerConfig mcp;
      mcp.command.push_back(s.command);
      mcp.command.insert(mcp.command.end(), s.args.begin(), s.args.end());
      mcp.where = tools.where;
      tools.mcp_server = std::move(mcp);
      continue;
    }
    auto u = parse_mcp_url(s.url);  // checked when task.toml was read
    if (!u) return u.fail_with(where(*h) + ": MCP server '" + s.name + "'");
    McpHttpServerConfig http;
    http.name = s.name;
    http.transport = s.transport;
    http.url = s.url;
    http.service = s.service;
    http.host = u->host_port;
    http.port = u->port;
    http.path = u->path;
    http.where = s.url_where;
    tools.http_mcp_servers.push_back(std::move(http));
  }
  t.harbor = std::move(h);
  return t;
}

Result<std::vector<std::string>> resolve_env(const std::vector<EnvEntry>& entries,
                                             const std::function<bool(const std::string&)>& allowed,
                                             const std::function<std::optional<std::string>(const std::string&)>& lookup) {
  std::vector<std::string> out;
  for (const auto& e : entries) {
    if (!e.is_template()) {
      out.push_back(e.name + "=" + e.value);
      continue;
    }
    const bool passed = allowed && allowed(e.host_var);
    std::optional<std::string> v = passed && lookup ? lookup(e.host_var) : std::nullopt;
    if (!v) v = e.fallback;
    if (!v) {
      std::string at = e.where.file.empty() ? std::string() : e.where.file + ":" + std::to_string(e.where.line) + ":" +
                                                                   std::to_string(e.where.column) + ": ";
      return fail(Errc::kInvalid,
                  at + "env " + e.name + " = \"" + e.value + "\": " +
                      (passed ? e.host_var + " is not set on the host and has no fallback"
                              : e.host_var + " is not passed to this run and has no fallback (forgectl run "
                                             "--env-passthrough " +
                                    e.host_var + ")"));
    }
    out.push_back(e.name + "=" + *v);
  }
  return out;
}

}  // namespace forge::manifest
