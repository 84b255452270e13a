// Loads a task.yaml: its own keys here, its blocks through task_blocks.cc and
// initial_state_parse.cc, its grading through load_grading and its environment through
// load_environment, with every problem of all of them reported together.
#include "manifest/task_parse.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/confined_dir.h"
#include "manifest/environment_parse.h"
#include "manifest/files.h"
#include "manifest/grading_parse.h"
#include "manifest/python_server.h"
#include "manifest/task_dir.h"
#include "manifest/task_pages.h"
#include "manifest/task_reader.h"
#include "manifest/yaml_json.h"

namespace forge::manifest {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kOtherAdapters = {"tau", "tlk_mcp_core", "terminal_bench"};

Result<std::string> task_file(const std::string& path) {
  switch (file_kind(path)) {
    case FileKind::kDirectory: {
      std::string file = join_path(path, "task.yaml");
      if (file_kind(file) != FileKind::kFile) return fail(Errc::kNotFound, "'" + path + "' is a directory without a task.yaml");
      return file;
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

// load_environment reports formatted lines; those about task.yaml go back into diagnostics so
// they sort with ours by line, the rest (its compose file) are kept as written.
void absorb(const Error& e, const std::string& file, Diagnostics& diags, std::vector<std::string>& other) {
  if (e.code != Errc::kInvalid) {
    other.push_back(e.what());
    return;
  }
  std::size_t start = 0;
  const std::string& text = e.message;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? text.size() + 1 : end + 1;
    if (line.rfind(file + ":", 0) != 0) {
      if (!line.empty()) other.push_back(line);
      continue;
    }
    Diagnostic d{file, 0, 0, {}, {}};
    std::string rest = line.substr(file.size() + 1);
    for (int* n : {&d.line, &d.column}) {
      std::size_t digits = 0;
      while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
      if (digits == 0 || digits >= rest.size() || rest[digits] != ':') break;
      *n = std::stoi(rest.substr(0, digits));
      rest = rest.substr(digits + 1);
    }
    d.message = rest.rfind(' ', 0) == 0 ? rest.substr(1) : rest;  // the hint stays in the message as formatted
    diags.add(std::move(d));
  }
}

// task.yaml's problems first, by position, then grading.yaml's, then the compose file's; warnings
// among them, marked.
Error combined(const Diagnostics& diags, const std::string& file, const std::vector<std::string>& other) {
  std::string text;
  for (const auto& d : diags.sorted(file)) text += (text.empty() ? "" : "\n") + d.format();
  for (const auto& line : other) text += (text.empty() ? "" : "\n") + line;
  return make_error(Errc::kInvalid, text);
}

void read_adapter_type(YamlReader& r, const Field& f, TaskConfig& t) {
  auto v = r.string(f, "");
  if (!v || *v == "native") return;
  if (std::find(kOtherAdapters.begin(), kOtherAdapters.end(), *v) != kOtherAdapters.end())
    r.error(f, "adapter_type '" + *v + "' is not supported yet", "forgectl reads native tasks");
  else
    r.error(f, "adapter_type must be 'native', got '" + *v + "'");
  t.adapter_type = *v;
}

// Whether path `a` is `b` or lies below it (both relative to the task directory).
bool is_under(const std::string& a, const std::string& b) {
  auto rel = fs::path(a).lexically_normal().lexically_relative(fs::path(b).lexically_normal());
  return !rel.empty() && *rel.begin() != "..";
}

// Task files the grader uses must not be copied to the agent under another name either: not by
// filesystem.copy, and not among an MCP server's files (a directory copied whole included).
void check_copies(const TaskConfig& t, const std::string& grading_rel, Diagnostics& diags) {
  std::vector<std::string> guarded;
  if (!grading_rel.empty()) guarded.push_back(grading_rel);
  if (t.grading.custom_checks.present && !t.grading.custom_checks.dir.empty()) guarded.push_back(t.grading.custom_checks.dir);
  if (t.grading.custom_checks.python()) guarded.push_back(t.grading.custom_checks.checks_file);
  if (!t.solution.script.empty()) guarded.push_back(t.solution.script);
  for (const auto& c : t.initial_state.filesystem_copy) {
    for (const auto& g : guarded) {
      if (!is_under(c.from, g)) continue;
      diags.add(Diagnostic{c.where.file, c.where.line, c.where.column,
                           "initial_state.filesystem.copy: '" + c.from + "' is a grading asset ('" + g +
                               "'); it never enters a container during the agent phase",
                           {}});
    }
  }
  if (!t.environment.tools.mcp_server) return;
  const auto& mcp = *t.environment.tools.mcp_server;
  for (const auto& f : mcp.files) {
    for (const auto& g : guarded) {
      if (!is_under(f, g) && !is_under(g, f)) continue;
      diags.add(Diagnostic{mcp.where.file, mcp.where.line, mcp.where.column,
                           "tools.agent.mcp_server.files: '" + f + "' " + (is_under(f, g) ? "is" : "holds") +
                               " a grading asset ('" + g + "'); it never enters a container during the agent phase",
                           {}});
    }
  }
}

// A Python tool server gets its tree's files beside it (tools/python_server.h), less the names
// server_copy_skips leaves out: a grading asset under another name there would reach the runner.
void check_server_files(const TaskConfig& t, const std::string& grading_rel, Diagnostics& diags) {
  const auto& m = t.environment.tools.mcp_server;
  if (!m || !m->python()) return;
  std::vector<std::pair<std::string, std::string>> guarded;  // {what, path relative to the task dir}
  if (!grading_rel.empty()) guarded.emplace_back("grading", grading_rel);
  const auto& cc = t.grading.custom_checks;
  if (cc.python()) guarded.emplace_back("custom_checks.file", cc.checks_file);
  else if (cc.present && !cc.dir.empty()) guarded.emplace_back("custom_checks.dir", cc.dir);
  if (!t.solution.script.empty()) guarded.emplace_back("solution.script", t.solution.script);
  for (const auto& [what, rel] : guarded) {
    auto in_root = (fs::path(t.dir) / rel).lexically_normal().lexically_relative(m->root);
    if (in_root.empty() || *in_root.begin() == "..") continue;
    fs::path so_far;
    bool skipped = false;
    for (const auto& part : in_root) {
      so_far /= part;
      skipped = skipped || server_copy_skips(so_far.string(), so_far != in_root);
    }
    if (!skipped)
      diags.add(Diagnostic{m->where.file, m->where.line, m->where.column,
                           "tools.agent.mcp_server: " + what + " '" + rel +
                               "' would be copied beside the server, into the agent's runner",
                           "name it as forgectl leaves out (grading.yaml, checks.py, tests/, solution*) or move it "
                           "out of " + m->root});
  }
}

// The egress rules read the trial's egress ledger, which the proxy and forgectl's resolver write; a
// full_internet trial has neither, and a task on the local executor no network of forgectl's: its
// rules could never be checked, so the task is refused here rather than failing every trial.
void check_egress_rules(const TaskConfig& t, Diagnostics& diags) {
  const EgressRules& e = t.grading.egress;
  if (!e.present) return;
  const char* why = t.environment.manifest.network_policy == NetworkPolicy::kFullInternet
                        ? "network_policy full_internet records no egress ledger"
                    : t.environment.tools.executor == ExecutorKind::kLocal
                        ? "a task on the local executor records no egress ledger"
                        : nullptr;
  if (why)
    diags.add(Diagnostic{e.where.file, e.where.line, e.where.column,
                         std::string("egress: ") + why + ", so these rules could never be checked",
                         "use no_internet or limited_internet, or remove the egress block"});
}

// www/ goes to mock-web whole: nothing in it may lead out of the task, and it has limits. Neither
// it nor mock_web may be a symlink, which would serve another part of the task (www -> tests).
void check_www(const TaskConfig& t, const std::string& shown_dir, Diagnostics& diags) {
  auto d = ConfinedDir::open(t.dir);
  if (!d) return;  // the task.yaml was read from it: reported otherwise if at all
  bool linked = false;
  for (const char* part : {"www", "mock_web"})
    if (Status st = check_web_dir(*d, part); !st) {
      linked = true;
      diags.add(Diagnostic{join_path(shown_dir, part), 0, 0,
                           std::string(part) + "/ (copied to mock-web): " + st.error().message,
                           st.error().message.find("leads outside") != std::string::npos
                               ? "a task reads only its own files; copy them into " + std::string(part) + "/"
                               : "make it a directory of its own and copy into it the pages the agent may read"});
    }
  if (linked) return;
  auto st = d->stat("www");
  if (!st && st.error().code == Errc::kNotFound) return;
  Status walked = st ? d->walk("www", kTestsLimits, [](const TreeEntry&) { return Status(); }) : Status(st.fail());
  if (!walked)
    diags.add(Diagnostic{
        join_path(shown_dir, "www"), 0, 0, "www/ (copied to mock-web): " + walked.error().message,
        walked.error().code == Errc::kForbidden ? "a task reads only its own files; copy them into www/" : ""});
}

// Whether `text` holds the URL path `path` ("/grade.json") not followed by more of a path:
// "GET http://mock-web:8080/grade.json now" does, ".../grade.json5" does not.
bool mentions(const std::string& text, const std::string& path) {
  for (auto at = text.find(path); at != std::string::npos; at = text.find(path, at + 1)) {
    std::size_t end = at + path.size();
    if (end == text.size()) return true;
    unsigned char c = static_cast<unsigned char>(text[end]);
    if (!std::isalnum(c) && c != '.' && c != '_' && c != '-' && c != '/' && c != '%') return true;
  }
  return false;
}

// What mock-web withholds of www/ and mock_web/: an agent the task sends there gets a 404 that
// would look like the model's failure. A warning each (the first kShown, then a count); an error
// for one the initial user message links to, since then the task cannot be done as written.
void report_withheld(const TaskConfig& t, const std::vector<WithheldPage>& pages, const std::string& shown_dir,
                     Diagnostics& diags) {
  constexpr std::size_t kShown = 20;
  std::size_t warned = 0, more = 0;
  for (const auto& p : pages) {
    const bool dir = !p.path.empty() && p.path.back() == '/';
    const std::string url = p.path.rfind("www/", 0) == 0 ? p.path.substr(3) : "/" + p.path;
    if (!dir && mentions(t.initial_user_message, url)) {
      diags.add(Diagnostic{join_path(shown_dir, p.path), 0, 0,
                           "the initial_user_message links to " + url + ", which mock-web withholds (" + p.reason +
                               "): the agent would get 404",
                           "serve the page under another name, or do not send the agent to it"});
    } else if (warned < kShown) {
      ++warned;
      diags.add(Diagnostic{join_path(shown_dir, p.path), 0, 0,
                           "mock-web withholds this " + std::string(dir ? "directory" : "file") + " (" + p.reason +
                               "): an agent that asks for it gets 404",
                           "", Severity::kWarning});
    } else {
      ++more;
    }
  }
  if (more > 0)
    diags.add(Diagnostic{join_path(shown_dir, "www"), 0, 0,
                         "and " + std::to_string(more) + " more files of www/ and mock_web/ that mock-web withholds", "",
                         Severity::kWarning});
}

// The task directory's own pages go to mock-web too, when the task has one: a page that leads
// out of the task, or too many of them, is refused here rather than at setup. What www/ and
// mock_web/ hold that mock-web withholds is reported (report_withheld).
void check_task_pages(const TaskConfig& t, const std::string& shown_dir, Diagnostics& diags) {
  if (t.initial_state.mock_web_base_url.empty() && !has_mock_web_service(t)) return;
  auto d = ConfinedDir::open(t.dir);
  if (!d || !check_web_dir(*d, "www") || !check_web_dir(*d, "mock_web")) return;  // check_www reports them
  std::vector<WithheldPage> withheld;
  auto note = [&](const WithheldPage& p) { withheld.push_back(p); };
  auto ignore = [](const TreeEntry&) { return Status(); };
  // www/'s own errors are check_www's to report; here only what it withholds.
  if (d->stat("www")) {
    Status www = walk_www_pages(t, *d, ignore, note);
    if (!www) withheld.clear();
  }
  if (has_task_pages_route(t)) {
    Status walked = walk_task_pages(t, *d, ignore, note);
    if (!walked)
      diags.add(Diagnostic{shown_dir, 0, 0, "the task's pages (copied to mock-web): " + walked.error().message,
                           walked.error().code == Errc::kForbidden ? "a task reads only its own files" : ""});
  }
  report_withheld(t, withheld, shown_dir, diags);
}

}  // namespace

Result<TaskConfig> load_task(const std::string& path) {
  auto file = task_file(path);
  if (!file) return file.fail_with("loading task");
  auto text = read_text(*file);
  if (!text) return text.fail_with("loading task");

  Diagnostics diags;
  YamlReader r(*file, diags);
  auto root = r.parse(*text);
  if (!root) return fail(diags.to_error());
  if (!root->node.IsMap()) {
    r.error(*root, "a task.yaml must be a mapping of keys");
    return fail(diags.to_error());
  }

  TaskConfig t;
  std::error_code ec;
  t.path = fs::absolute(*file, ec).lexically_normal().string();
  t.dir = fs::path(t.path).parent_path().string();
  const std::string shown_dir = fs::path(*file).parent_path().string();

  // load_environment reports the top level's unknown and duplicate keys, task_id, tools and
  // environment; reading the entries through a second reader keeps them from being reported twice.
  Diagnostics quiet_diags;
  YamlReader quiet(*file, quiet_diags);
  std::optional<Field> grading, system_prompt;
  std::optional<std::string> policy_prompt;
  bool has_id = false;
  std::vector<std::string> missing = {"name", "category", "description"};  // required, as in Tolokaforge
  for (const auto& e : quiet.mapping(*root, "")) {
    const std::string& k = e.key;
    std::erase(missing, k);
    if (k == "task_id") {
      has_id = true;
      if (auto v = quiet.string(e, "")) t.task_id = *v;
    } else if (k == "name") {
      if (auto v = r.string(e, "")) t.name = *v;
    } else if (k == "category") {
      if (auto v = r.string(e, "")) t.category = *v;
    } else if (k == "description") {
      if (auto v = r.string(e, "")) t.description = *v;
    } else if (k == "adapter_type") {
      read_adapter_type(r, e, t);
    } else if (k == "max_turns") {
      auto v = r.integer(e, "");
      if (v && *v <= 0) r.error(e, "'max_turns' must be positive");
      else if (v) t.max_turns = static_cast<int>(*v);
    } else if (k == "initial_user_message") {
      if (auto v = r.string(e, "")) t.initial_user_message = *v;
    } else if (k == "initial_state") {
      t.initial_state = read_initial_state(r, e, t.dir);
    } else if (k == "user_simulator") {
      t.user_simulator = read_user_simulator(r, e);
    } else if (k == "metadata") {
      read_metadata(r, e, t);
    } else if (k == "policies") {
      policy_prompt = read_policies(r, e, t);
    } else if (k == "grading") {
      grading = e;
    } else if (k == "system_prompt") {
      system_prompt = e;
    } else if (k == "adapter_settings") {
      if (e.node.IsMap()) {
        if (auto j = yaml_to_json(r, e, "adapter_settings")) t.adapter_settings_json = *j;
      } else if (!e.is_null()) {
        r.error(e, "'adapter_settings' must be a mapping");
      }
    } else if (k == "solution") {
      t.solution = read_solution(r, e, t.dir);
    }
  }
  if (!has_id && fs::path(*file).filename() != "task.yaml") {
    r.error(*root, "not a task: no 'task_id'", "a task file is named task.yaml or has a top-level task_id");
    return fail(diags.to_error());
  }
  for (const auto& k : missing) r.error(*root, "the task has no '" + k + "'");

  std::string grading_rel;
  if (!grading) {
    r.error(*root, "the task has no 'grading'", "name its grading.yaml: grading: grading.yaml");
  } else if (auto rel = r.string(*grading, "")) {
    if (task_path(r, *grading, "grading", t.dir, *rel, PathKind::kFile, Reach::kGrader)) {
      grading_rel = fs::path(*rel).lexically_normal().string();
      t.grading = load_grading(join_path(shown_dir, *rel), diags, t.dir);
      t.grading.path = join_path(t.dir, *rel);
    }
  }
  resolve_system_prompt(r, system_prompt, policy_prompt, t);
  check_www(t, shown_dir, diags);

  std::vector<std::string> other;
  auto env = load_environment(*file);
  if (env) t.environment = std::move(*env);
  else absorb(env.error(), *file, diags, other);
  check_task_pages(t, shown_dir, diags);
  if (env) check_egress_rules(t, diags);
  check_copies(t, grading_rel, diags);
  check_server_files(t, grading_rel, diags);
  check_task_size(r, *root, t);

  if (diags.has_errors() || !other.empty()) return fail(combined(diags, *file, other));
  t.warnings = diags.sorted(*file);
  return t;
}

}  // namespace forge::manifest
