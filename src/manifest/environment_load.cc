// Loading a task's environment from a task directory, a task.yaml or a standalone manifest,
// together with its compose file or built-in stack.
#include <cstdlib>
#include <filesystem>

#include "core/confined_dir.h"
#include "manifest/compose_parse.h"
#include "manifest/environment_parse.h"
#include "manifest/environment_reader.h"
#include "manifest/files.h"
#include "manifest/python_server.h"
#include "manifest/stacks.h"
#include "manifest/tools_parse.h"

namespace forge::manifest {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kComposeMax = std::size_t{16} << 20;

// Tolokaforge's task.yaml keys (reference/tolokaforge.md §2.1), read by other parts of forgectl,
// plus forgectl's own `environment` and `solution` (the oracle's reference solution).
const std::vector<std::string> kTaskKeys = {"task_id",
                                            "name",
                                            "category",
                                            "description",
                                            "adapter_type",
                                            "max_turns",
                                            "initial_user_message",
                                            "initial_state",
                                            "tools",
                                            "user_simulator",
                                            "metadata",
                                            "policies",
                                            "grading",
                                            "system_prompt",
                                            "adapter_settings",
                                            "environment",
                                            "solution"};

// Where the manifest comes from: a task directory means its task.yaml.
Result<std::string> manifest_file(const std::string& path) {
  switch (file_kind(path)) {
    case FileKind::kDirectory: {
      std::string task = join_path(path, "task.yaml");
      if (file_kind(task) != FileKind::kFile)
        return fail(Errc::kNotFound, "'" + path + "' is a directory without a task.yaml");
      return task;
    }
    case FileKind::kFile:
      return path;
    case FileKind::kMissing:
      return fail(Errc::kNotFound, "'" + path + "' does not exist");
    case FileKind::kOther:
      break;
  }
  return fail(Errc::kInvalid, "'" + path + "' is neither a file nor a directory");
}

// The task.yaml's own keys; returns the environment block, if any.
std::optional<Field> read_task(YamlReader& r, const Field& root, std::string& task_id, ToolsConfig& tools,
                               const std::string& base_dir) {
  std::optional<Field> environment;
  bool has_id = false;
  for (const auto& k : r.known_keys(r.mapping(root, ""), "", kTaskKeys)) {
    if (k.key == "task_id") {
      has_id = true;
      auto id = r.string(k, "");
      if (id && id->empty())
        r.error(k, "'task_id' is empty");
      else if (id)
        task_id = *id;
    } else if (k.key == "environment") {
      environment = k;
    } else if (k.key == "tools") {
      tools = read_tools(r, k, base_dir);
    }
  }
  if (!has_id && root.node.IsMap()) r.error(root, "the task has no 'task_id'");
  return environment;
}

// A Python tool server runs in forgectl's Python image, as a uid the agent's processes do not
// have (docs/python.md): the runner defaults to that image, and another image or a runner user
// that could touch the server is refused.
void python_runner(const ToolsConfig& tools, RunnerSpec& runner, Diagnostics& diags) {
  if (!tools.mcp_server || !tools.mcp_server->python()) return;
  const SourceLocation& at = tools.mcp_server->where;
  auto problem = [&](std::string message, std::string hint) {
    diags.add(Diagnostic{at.file, at.line, at.column, "tools.agent.mcp_server: " + std::move(message), std::move(hint)});
  };
  if (runner.image.empty())
    runner.image = kPythonImage;
  else if (runner.image != kPythonImage)
    problem("a Python server runs in " + std::string(kPythonImage) + ", not in environment.runner.image '" + runner.image +
                "'",
            "drop environment.runner.image, or start the server yourself: {command: [...], files: [...]}");
  if (runner.user.empty()) return;
  const unsigned long uid = std::strtoul(runner.user.c_str(), nullptr, 10);  // numeric: environment_parse.cc
  if (uid == 0 || uid == kServerUid)
    problem("the runner's user " + runner.user + " could signal the Python server or change its files",
            "run the agent as 1000:1000 (the default)");
}

}  // namespace

Result<LoadedEnvironment> load_environment(const std::string& path) {
  auto file = manifest_file(path);
  if (!file) return file.fail_with("loading environment");
  auto text = read_text(*file);
  if (!text) return text.fail_with("loading environment");

  Diagnostics diags;
  YamlReader r(*file, diags);
  auto root = r.parse(*text);
  if (!root) return fail(diags.to_error());

  LoadedEnvironment out;
  std::error_code ec;
  out.source = fs::absolute(*file, ec).lexically_normal().string();
  out.base_dir = fs::path(out.source).parent_path().string();
  out.manifest.path = out.source;
  out.manifest.where = SourceLocation{*file, 0, 0};

  // A task.yaml is recognised by its name or its task_id; anything else is a standalone manifest.
  const YAML::Node& top = root->node;  // const: operator[] on a non-const node may insert the key
  bool is_task = fs::path(*file).filename() == "task.yaml" || (top.IsMap() && top["task_id"]);
  std::string compose_shown;
  if (is_task) {
    auto block = read_task(r, *root, out.task_id, out.tools, out.base_dir);
    if (block && !block->is_null()) {
      auto env = read_environment(r, *block, "environment");
      out.manifest = std::move(env.manifest);
      compose_shown = std::move(env.compose_shown);
    }
  } else if (!root->is_null()) {
    auto env = read_environment(r, *root, "");
    out.manifest = std::move(env.manifest);
    compose_shown = std::move(env.compose_shown);
  }

  const std::string services_key = is_task ? "environment.services" : "services";
  const std::size_t before_compose = diags.size();
  std::string stack_label;
  if (!out.manifest.compose_file.empty()) {
    // Read beneath the manifest's directory (checked and reported by read_environment): a
    // compose file that is a link out is never read, so none of it can reach a message.
    auto rel = fs::path(out.manifest.compose_file).lexically_relative(out.base_dir).string();
    auto d = ConfinedDir::open(out.base_dir, "the manifest's directory");
    auto text = d ? d->read(rel, kComposeMax) : Result<std::string>(d.fail());
    if (text) out.compose = parse_compose(*text, compose_shown, diags);
    out.compose.path = out.manifest.compose_file;
    stack_label = "the compose file '" + compose_shown + "'";
  } else if (auto stack = builtin_stack(out.manifest.stack)) {
    out.compose = std::move(*stack);
    stack_label = "the built-in stack '" + out.manifest.stack + "'";
  } else {
    diags.add(Diagnostic{*file, 0, 0, stack.error().what(), {}});
  }

  // Cross-check only against a compose file that could be read at all, to avoid an echo of
  // "no such service" for every entry after a syntax error.
  bool compose_readable = !(diags.size() > before_compose && out.compose.services.empty());
  if (compose_readable && !stack_label.empty()) {
    std::vector<std::string> names;
    for (const auto& s : out.compose.services) names.push_back(s.name);
    for (const auto& [name, iso] : out.manifest.services) {
      if (out.compose.find(name)) continue;
      std::string close = closest_match(name, names);
      diags.add(Diagnostic{iso.where.file, iso.where.line, iso.where.column,
                           services_key + ": '" + name + "' is not a service of " + stack_label,
                           close.empty() ? "" : "did you mean '" + close + "'?"});
    }
  }
  python_runner(out.tools, out.manifest.runner, diags);
  if (!diags.empty()) return fail(diags.to_error());
  return out;
}

}  // namespace forge::manifest
