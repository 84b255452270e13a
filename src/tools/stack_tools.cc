// Opens a running stack's tools.
#include "tools/stack_tools.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "core/confined_dir.h"
#include "core/strings.h"
#include "engine/archive.h"
#include "engine/containers.h"
#include "engine/tar.h"
#include "manifest/environment_parse.h"
#include "manifest/project.h"
#include "manifest/task_dir.h"
#include "stack/labels.h"
#include "tools/container_sandbox.h"
#include "tools/mcp_services.h"
#include "tools/python_server.h"
#include "tools/toolbox.h"

namespace forge::tools {

namespace fs = std::filesystem;

namespace {

std::string env_value(const std::vector<std::string>& env, std::string_view key) {
  for (const auto& kv : env)
    if (kv.size() > key.size() && kv.compare(0, key.size(), key) == 0 && kv[key.size()] == '=') return kv.substr(key.size() + 1);
  return {};
}

// The egress proxy and the names reached without it, from the runner's own environment.
HttpRoute http_route(const std::vector<std::string>& env) {
  HttpRoute r;
  std::string proxy = env_value(env, "HTTP_PROXY");
  if (starts_with(proxy, "http://")) {
    std::string hostport = proxy.substr(7);
    while (!hostport.empty() && hostport.back() == '/') hostport.pop_back();
    auto colon = hostport.rfind(':');
    r.proxy_host = hostport.substr(0, colon);
    r.proxy_port = colon == std::string::npos ? 80 : std::atoi(hostport.c_str() + colon + 1);
  }
  std::string no_proxy = env_value(env, "NO_PROXY");
  std::size_t start = 0;
  while (start <= no_proxy.size() && !no_proxy.empty()) {
    auto comma = no_proxy.find(',', start);
    r.no_proxy.push_back(no_proxy.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return r;
}

Status copy_task_files(engine::Client& c, const std::string& runner, const manifest::LoadedEnvironment& env,
                       const manifest::McpServerConfig& mcp) {
  if (mcp.files.empty()) return {};
  // Read beneath the task directory (a project's task: also its project's files, no symlink
  // followed outside the task): a file swapped for a link out since the task loaded is refused.
  auto task = manifest::open_task_files(env.base_dir);
  if (!task) return task.fail_with("copying the MCP server's files");
  engine::TarWriter tar;
  // A project's task keeps the project's layout ("mcp_server.py", "tasks/<name>/…"), so "../../x"
  // resolves from its directory there, the server's working directory.
  const std::string task_dir = manifest::layout_task_dir(env.base_dir);
  if (!task_dir.empty()) {
    if (auto st = tar.add_directory("tasks", 0755); !st) return st.fail_with("copying the MCP server's files");
    if (auto st = tar.add_directory(task_dir, 0755); !st) return st.fail_with("copying the MCP server's files");
  }
  auto laid = [&](const std::string& rel) { return manifest::layout_path(env.base_dir, rel); };
  for (const auto& rel : mcp.files) {
    auto found = task->stat(rel);
    Status st = found ? Status() : Status(found.fail());
    if (found && found->kind == forge::EntryKind::kDirectory) {
      st = task->walk(rel, manifest::kTestsLimits, [&](const TreeEntry& e) -> Status {
        std::string name = laid((fs::path(rel) / e.rel).generic_string());
        if (e.kind == forge::EntryKind::kDirectory) return tar.add_directory(name, 0755);
        engine::TarEntry meta;
        meta.path = name;
        meta.mode = e.mode;
        return tar.add_fd(meta, e.fd);
      });
    } else if (found) {
      auto fd = task->open_file(rel);
      if (!fd)
        st = fd.fail();
      else {
        struct stat info {};
        engine::TarEntry meta;
        meta.path = laid(rel);
        meta.mode = ::fstat(fd->get(), &info) == 0 ? static_cast<unsigned>(info.st_mode & 0777) : 0644;
        st = tar.add_fd(meta, fd->get());
      }
    }
    if (!st) return st.fail_with("copying the MCP server's files");
  }
  auto bytes = tar.finish();
  if (!bytes) return bytes.fail();
  // Into the volume up mounts for them (kTaskFilesDir links there): readable by the agent, root's
  // to write.
  return engine::put_archive(c, runner, policy::kTaskFilesMount, std::move(*bytes));
}

// The task's MCP servers over HTTP: their tools join `extra`; a name two servers offer is refused
// (the agent could not tell which one it calls).
Status open_http_servers(engine::Client& c, StackTools& t, const OpenOptions& o, std::vector<std::shared_ptr<Tool>>& extra) {
  auto servers = open_http_mcp_servers(c, t.stack, t.env.tools.http_mcp_servers, o.engine_is_local,
                                       Deadline::in(o.mcp_start_timeout));
  if (!servers) return servers.fail();
  for (auto& s : *servers) {
    std::erase_if(s.tools, [](const ToolSpec& spec) { return is_internal_state_tool(spec.name); });
    for (const auto& spec : s.tools) {
      if (std::find(t.mcp_tool_names.begin(), t.mcp_tool_names.end(), spec.name) != t.mcp_tool_names.end())
        return fail(Errc::kUnsupported, "MCP server '" + s.name + "' offers tool '" + spec.name +
                                            "', which another of the task's MCP servers offers too");
      t.mcp_tool_names.push_back(spec.name);
    }
    auto tools = mcp_tools(s.session, s.tools);
    extra.insert(extra.end(), tools.begin(), tools.end());
    t.http_mcp.push_back(std::move(s.session));
  }
  return {};
}

// `known`: the task's environment as the caller holds it; null: reloaded from the runner's label.
Result<StackTools> open_tools(engine::Client& c, const std::string& stack, const manifest::LoadedEnvironment* known,
                              const OpenOptions& o) {
  std::string what = "opening the tools of stack '" + stack + "'";
  auto runners = engine::list_containers(
      c, {{"label", {std::string(stack::kLabelStack) + "=" + stack, std::string(stack::kLabelRole) + "=runner"}}});
  if (!runners) return runners.fail_with(what);
  if (runners->empty()) return fail(Errc::kNotFound, "no stack named '" + stack + "' with a runner (see forgectl ps)");
  const auto& r = runners->front();
  if (r.state != "running") return fail(Errc::kConflict, what + ": its runner is " + r.state + ", not running");
  auto info = engine::inspect_container(c, r.id);
  if (!info) return info.fail_with(what);
  StackTools t;
  t.stack = stack;
  t.runner = r.id;
  if (known) {
    t.env = *known;
  } else {
    auto src = info->labels.find(stack::kLabelSource);
    if (src == info->labels.end())
      return fail(Errc::kInvalid, what + ": the runner has no " + std::string(stack::kLabelSource) + " label");
    auto env = manifest::load_environment(src->second);
    if (!env) return env.fail_with(what + ": reloading its task " + src->second);
    t.env = std::move(*env);
  }
  if (t.env.tools.executor == manifest::ExecutorKind::kLocal)
    return fail(Errc::kInvalid, what + ": its task uses the local executor, whose tools run on the host, not in the runner");

  HelperChannelSpec spec{r.id, info->workdir.empty() ? "/work" : info->workdir, o.user.empty() ? info->user : o.user};
  t.sandbox = std::make_shared<ContainerSandbox>(c, spec);
  if (!o.start_mcp) return t;

  std::vector<std::shared_ptr<Tool>> extra;
  if (const auto& m = t.env.tools.mcp_server) {
    if (m->python()) {
      // Its tree in a directory of its own uid, 0700, beneath the task files' volume: the agent
      // can neither read the server's files nor (another uid) its process's memory.
      auto tar = python_server_tar(*m, kPythonServerDir);
      if (!tar) return tar.fail_with(what);
      if (auto st = engine::put_archive(c, r.id, policy::kTaskFilesMount, std::move(*tar)); !st) return st.fail_with(what);
      auto session = start_python_server(c, r.id, *m, std::string(policy::kTaskFilesMount) + "/" + kPythonServerDir,
                                         Deadline::in(o.mcp_start_timeout));
      if (!session) return session.fail_with(what);
      t.mcp = std::move(*session);
    } else {
      if (auto st = copy_task_files(c, r.id, t.env, *m); !st) return st.fail_with(what);
      const std::string task_dir = manifest::layout_task_dir(t.env.base_dir);
      const std::string files_dir = task_dir.empty() ? std::string(kTaskFilesDir) : std::string(kTaskFilesDir) + "/" + task_dir;
      McpLaunch launch{r.id, m->command, {}, info->user, m->files.empty() ? spec.workspace : files_dir};
      auto session = McpSession::start(c, launch, Deadline::in(o.mcp_start_timeout));
      if (!session) return session.fail_with(what);
      t.mcp = std::move(*session);
    }
    // A task file like any other: read beneath the task directory, never through a link out.
    const std::string fixture = "fixtures/tools.json";
    auto dir = ConfinedDir::open(t.env.base_dir);
    auto text = dir ? dir->read(fixture, std::size_t{4} << 20) : Result<std::string>(dir.fail());
    if (!text && text.error().code != Errc::kNotFound) return text.fail_with(what + ": " + fixture);
    auto specs = text ? parse_tool_fixture(*text, (fs::path(t.env.base_dir) / fixture).string())
                      : t.mcp->list_tools(Deadline::in(o.mcp_start_timeout));
    if (!specs) return specs.fail_with(what);
    // The state tools are forgectl's (seeding, grading), never an actor's, whatever a fixture lists.
    std::erase_if(*specs, [](const ToolSpec& s) { return is_internal_state_tool(s.name); });
    extra = mcp_tools(t.mcp, *specs);
    for (const auto& spec : *specs) t.mcp_tool_names.push_back(spec.name);
  }
  if (auto st = open_http_servers(c, t, o, extra); !st) return st.fail_with(what);
  BuiltinOptions b;
  b.sandbox = t.sandbox;
  b.http = http_route(info->env);
  b.db = o.db;
  b.rag = o.rag;
  b.browser = o.browser;
  auto exec = make_toolbox({t.env.tools, b, extra, o.log, o.on_record});
  if (!exec) return exec.fail_with(what);
  t.executor = std::move(*exec);
  return t;
}

}  // namespace

Result<StackTools> open_stack_tools(engine::Client& c, const std::string& stack, const OpenOptions& o) {
  return open_tools(c, stack, nullptr, o);
}

Result<StackTools> open_stack_tools(engine::Client& c, const std::string& stack, const manifest::LoadedEnvironment& env,
                                    const OpenOptions& o) {
  return open_tools(c, stack, &env, o);
}

}  // namespace forge::tools
