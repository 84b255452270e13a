// Reads a task.yaml's `tools:` block strictly.
#include "manifest/tools_parse.h"

#include <algorithm>
#include <filesystem>

#include "core/confined_dir.h"
#include "manifest/project.h"
#include "manifest/python_server.h"
#include "manifest/scalar_parse.h"
#include "manifest/task_dir.h"
#include "manifest/task_reader.h"

namespace forge::manifest {

namespace fs = std::filesystem;

namespace {

// Tolokaforge's per-actor keys.
const std::vector<std::string> kActorKeys = {"enabled", "mcp_server", "browser", "mobile"};

std::vector<std::string> tool_names(YamlReader& r, const Field& f, const std::string& what) {
  std::vector<std::string> out;
  auto names = r.strings(f, what);
  if (!names) return out;
  for (const auto& n : *names) {
    bool ok = !n.empty();
    for (char c : n) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.');
    if (!ok) {
      r.error(f, what + ": '" + n + "' is not a tool name");
    } else if (n.rfind("_tolokaforge_", 0) == 0) {
      // A tool server's internal state tools (Tolokaforge's fixtures list them): forgectl's own,
      // for seeding and grading, never an actor's. Dropped, so such tasks run unchanged.
    } else if (std::find(out.begin(), out.end(), n) != out.end()) r.error(f, what + ": '" + n + "' is listed twice");
    else out.push_back(n);
  }
  return out;
}

// What is wrong with MCP file `rel` as it will be copied into the runner, or "": resolved beneath
// the task directory or its project (no symlink out), a directory within the copy limits.
std::string confined_problem(const std::string& base_dir, const std::string& rel) {
  auto d = open_task_files(base_dir);
  if (!d) return d.error().message;
  auto st = d->stat(rel);
  if (!st) return st.error().message;
  if (st->kind == EntryKind::kDirectory) {
    // A directory is copied whole: nothing in it may be a grading asset ("." would take grading.yaml).
    std::string asset;
    auto w = d->walk(rel, kTestsLimits, [&](const TreeEntry& e) -> Status {
      std::string inner = (fs::path(rel) / e.rel).lexically_normal().string();
      if (!is_grading_asset(inner)) return {};
      asset = inner;
      return fail(Errc::kForbidden, "grading asset");
    });
    if (!asset.empty())
      return "'" + rel + "' holds a grading asset ('" + asset + "'); it never enters a container during the agent phase";
    if (!w) return w.error().message;
  } else if (st->kind != EntryKind::kFile) {
    return "'" + rel + "' is neither a file nor a directory";
  }
  return "";
}

// Tolokaforge's `mcp_server: mcp_server.py` (or a project's `../../mcp_server.py`): one word
// naming a Python file.
bool is_python_script(std::string_view s) {
  return s.size() > 3 && s.compare(s.size() - 3, 3, ".py") == 0 && s.find_first_of(" \t\n'\"") == std::string_view::npos;
}

// The script beneath its root, and the tree copied beside it within the limits of the volume it
// is copied into (the size of kTestsLimits).
std::optional<McpServerConfig> python_server(YamlReader& r, const Field& f, const std::string& base_dir,
                                             const std::string& script, McpServerConfig m) {
  const std::string what = "tools.agent.mcp_server";
  if (fs::path(script).is_absolute()) {
    r.error(f, what + ": '" + script + "' must be a path relative to the task directory");
    return std::nullopt;
  }
  const std::string abs = (fs::path(base_dir) / script).lexically_normal().string();
  auto root = python_root(base_dir, {abs});
  if (!root) {
    r.error(f, what + ": " + root.error().message, "a task's server is in its directory or its project's");
    return std::nullopt;
  }
  m.root = *root;
  m.script = fs::path(abs).lexically_relative(m.root).string();
  fs::path so_far;
  for (const auto& part : fs::path(m.script)) {
    so_far /= part;
    if (server_copy_skips(so_far.string(), so_far != fs::path(m.script))) {
      r.error(f, what + ": '" + script + "' is a grading asset's path (" + so_far.string() +
                     "); it never enters a container during the agent phase");
      return std::nullopt;
    }
  }
  auto dir = ConfinedDir::open(m.root, "the server's directory");
  auto st = dir ? dir->stat(m.script) : Result<ConfinedStat>(dir.fail());
  if (!st || st->kind != EntryKind::kFile) {
    r.error(f, what + ": " + (st ? "'" + script + "' is not a file" : st.error().message));
    return std::nullopt;
  }
  auto skip = [](const std::string& rel, EntryKind k) { return server_copy_skips(rel, k == EntryKind::kDirectory); };
  if (auto w = dir->walk("", kTestsLimits, skip, [](const TreeEntry&) { return Status(); }); !w) {
    r.error(f, what + ": the files copied beside the server (" + m.root + "): " + w.error().message,
            w.error().message.find("outside") != std::string::npos ? "a task reads only its own files" : "");
    return std::nullopt;
  }
  m.command = {"python3", m.script};  // shown in messages; the runner runs forgectl's launcher
  return m;
}

std::optional<McpServerConfig> mcp_server(YamlReader& r, const Field& f, const std::string& base_dir) {
  McpServerConfig m;
  m.where = r.location(f);
  if (f.node.IsScalar()) {
    auto s = r.string(f, "tools.agent.mcp_server");
    if (!s) return std::nullopt;
    if (is_python_script(*s)) return python_server(r, f, base_dir, *s, std::move(m));
    auto argv = shell_split(*s);
    if (!argv || argv->empty()) {
      r.error(f, "tools.agent.mcp_server: not a command line");
      return std::nullopt;
    }
    m.command = *argv;
    return m;
  }
  for (const auto& k : r.known_keys(r.mapping(f, "tools.agent.mcp_server"), "tools.agent.mcp_server", {"command", "files"})) {
    if (k.key == "command") {
      if (auto v = r.strings(k, "tools.agent.mcp_server.command", Strings::kStringOrList)) {
        if (k.node.IsScalar()) {
          auto argv = shell_split((*v)[0]);
          if (argv) m.command = *argv;
        } else {
          m.command = *v;
        }
      }
    } else if (k.key == "files") {
      if (auto v = r.strings(k, "tools.agent.mcp_server.files")) {
        for (const auto& rel : *v) {
          const std::string what = "tools.agent.mcp_server.files: ";
          std::optional<PathProblem> outside;
          if (leaves_task(rel)) outside = project_path_problem(base_dir, rel, Reach::kAgent);
          if (fs::path(rel).is_absolute())
            r.error(k, what + "'" + rel + "' must be a path inside the task directory");
          else if (outside)
            r.error(k, what + outside->message, outside->hint);
          else if (is_grading_asset(rel))
            r.error(k, what + "'" + rel + "' is a grading asset; it never enters a container during the agent phase");
          else if (auto problem = confined_problem(base_dir, rel); !problem.empty())
            r.error(k, what + problem, problem.find("outside") != std::string::npos ? "a task reads only its own files" : "");
          else
            m.files.push_back(rel);
        }
      }
    }
  }
  if (m.command.empty()) {
    r.error(f, "tools.agent.mcp_server: 'command' is required");
    return std::nullopt;
  }
  return m;
}

// The 15 action types of Tolokaforge's browser (Gemini Computer Use names).
const std::vector<std::string> kBrowserActions = {
    "open_web_browser", "navigate",  "screenshot", "wait_5_seconds",  "go_back",         "go_forward", "search",
    "click_at",         "select",    "hover_at",   "type_text_at",    "key_combination", "scroll_document",
    "scroll_at",        "drag_and_drop"};

BrowserConfig browser(YamlReader& r, const Field& f) {
  BrowserConfig b;
  b.where = r.location(f);
  const std::string what = "tools.agent.browser";
  for (const auto& k : r.known_keys(r.mapping_or_null(f, what), what, {"initial_url", "allowed_actions"})) {
    if (k.key == "initial_url") {
      auto v = r.string(k, what + ".initial_url");
      if (v && !v->empty() && v->rfind("http://", 0) != 0 && v->rfind("https://", 0) != 0)
        r.error(k, what + ".initial_url: '" + *v + "' is not an http:// or https:// URL");
      else if (v) b.initial_url = *v;
    } else if (auto v = r.strings(k, what + ".allowed_actions")) {
      for (const auto& a : *v) {
        if (std::find(kBrowserActions.begin(), kBrowserActions.end(), a) == kBrowserActions.end())
          r.error(k, what + ".allowed_actions: '" + a + "' is not a browser action type");
        else if (std::find(b.allowed_actions.begin(), b.allowed_actions.end(), a) == b.allowed_actions.end())
          b.allowed_actions.push_back(a);
      }
    }
  }
  return b;
}

ToolPolicyConfig policy(YamlReader& r, const Field& f, const std::string& what) {
  ToolPolicyConfig p;
  p.where = r.location(f);
  for (const auto& k : r.known_keys(r.mapping(f, what), what, {"timeout_s", "rate_limit", "rate_per_minute"})) {
    std::string sub = what + "." + k.key;
    if (k.key == "timeout_s") {
      auto v = r.number(k, sub);
      if (v && *v <= 0) r.error(k, sub + " must be positive");
      else if (v) p.timeout_s = *v;
    } else {
      auto v = r.integer(k, sub);
      if (v && *v < 0) r.error(k, sub + " must not be negative");
      else if (v) (k.key == "rate_limit" ? p.rate_limit : p.rate_per_minute) = static_cast<int>(*v);
    }
  }
  return p;
}

}  // namespace

ToolsConfig read_tools(YamlReader& r, const Field& block, const std::string& base_dir) {
  ToolsConfig t;
  t.declared = true;
  t.where = r.location(block);
  for (const auto& k : r.known_keys(r.mapping_or_null(block, "tools"), "tools", {"agent", "user", "policies", "executor"})) {
    if (k.key == "agent" || k.key == "user") {
      std::string what = "tools." + k.key;
      for (const auto& a : r.known_keys(r.mapping_or_null(k, what), what, kActorKeys)) {
        if (a.key == "enabled") (k.key == "agent" ? t.agent_enabled : t.user_enabled) = tool_names(r, a, what + ".enabled");
        else if (a.key == "mcp_server" && k.key == "agent") t.mcp_server = mcp_server(r, a, base_dir);
        else if (a.key == "mcp_server") r.error(a, "tools.user.mcp_server is not supported; declare it under tools.agent");
        else if (a.key == "browser" && k.key == "agent") t.browser = browser(r, a);
        else if (a.key == "mobile" && k.key == "agent") t.mobile_where = r.location(a);
        else if (a.key == "browser" || a.key == "mobile")
          r.error(a, what + "." + a.key + " is not supported; the browser is the agent's (tools.agent." + a.key + ")");
      }
    } else if (k.key == "policies") {
      for (const auto& p : r.mapping_or_null(k, "tools.policies")) t.policies[p.key] = policy(r, p, "tools.policies." + p.key);
    } else if (k.key == "executor") {
      auto v = r.string(k, "tools.executor");
      if (v && *v == "container") t.executor = ExecutorKind::kContainer;
      else if (v && *v == "local") t.executor = ExecutorKind::kLocal;
      else if (v) r.error(k, "tools.executor must be 'container' or 'local'", "'local' runs commands on the host: only for trusted tasks");
    }
  }
  return t;
}

}  // namespace forge::manifest
