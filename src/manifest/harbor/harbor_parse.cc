// Loads a Harbor task directory: task.toml through harbor_config.cc, then the files it implies
// (instruction, environment, tests, solution, steps), each confined to the directory and bounded.
#include "manifest/harbor/harbor_parse.h"

#include <cctype>
#include <filesystem>
#include <set>

#include "manifest/files.h"
#include "manifest/harbor/harbor_reader.h"
#include "manifest/harbor/harness_compose.h"
#include "manifest/mcp_url.h"
#include "manifest/task_dir.h"

namespace forge::manifest {

namespace fs = std::filesystem;

namespace {

class FileChecks {
 public:
  FileChecks(TaskDir& td, HarborTask& t, Diagnostics& diags) : td_(td), t_(t), diags_(diags) {}

  void run() {
    const bool multi = !t_.steps.empty();
    if (!multi) {
      t_.instruction = instruction("instruction.md");
    } else if (td_.find("instruction.md") == TaskDir::Found::kFile) {
      warn("instruction.md", "instruction.md has no effect: a multi-step task has one instruction per step");
    }
    environment();
    tests(multi);
    if (td_.find("solution") == TaskDir::Found::kDirectory && td_.check_tree("solution", kTestsLimits, "solution/")) {
      t_.files.solution_dir = td_.abs("solution");
      t_.files.solution_script = script("solution/solve.sh");
    }
    for (auto& s : t_.steps) step(s);
    extra_steps();
    separate_verifier();
    services();
    mcp_services();
  }

 private:
  void warn(std::string_view rel, std::string message) {
    diags_.add(Diagnostic{td_.shown(rel), 0, 0, std::move(message), {}, Severity::kWarning});
  }
  void error_at(const SourceLocation& at, std::string message, std::string hint = {}) {
    diags_.add(Diagnostic{at.file, at.line, at.column, std::move(message), std::move(hint)});
  }

  // The text of a required, non-empty instruction file.
  std::string instruction(const std::string& rel) {
    auto text = td_.read(rel, kMaxInstructionBytes, "the instruction");
    if (text && text->find_first_not_of(" \t\r\n") == std::string::npos) {
      diags_.add(Diagnostic{td_.shown(rel), 0, 0, rel + " is empty", "write what the agent is asked to do"});
      return {};
    }
    return text.value_or("");
  }

  // An optional script: its absolute path when it is a file within limits, else "".
  std::string script(const std::string& rel) {
    if (td_.find(rel) != TaskDir::Found::kFile) return {};
    return td_.check_file(rel, kMaxScriptBytes, "the script") ? td_.abs(rel) : std::string();
  }

  void environment() {
    switch (td_.find("environment")) {
      case TaskDir::Found::kDirectory:
        break;
      case TaskDir::Found::kMissing:
        diags_.add(Diagnostic{td_.shown("environment"), 0, 0, "the task has no environment/ directory",
                              "put the Dockerfile (or docker-compose.yaml) the agent works in under environment/"});
        return;
      default:
        return;
    }
    if (!td_.check_tree("environment", kContextLimits, "the environment directory")) return;
    t_.files.environment_dir = td_.abs("environment");
    if (td_.find("environment/Dockerfile") == TaskDir::Found::kFile &&
        td_.check_file("environment/Dockerfile", kMaxScriptBytes, "the Dockerfile"))
      t_.files.dockerfile = td_.abs("environment/Dockerfile");
    const std::string compose = "environment/docker-compose.yaml";
    if (td_.find(compose) == TaskDir::Found::kFile) {
      if (auto text = td_.read(compose, kMaxConfigBytes, "the compose file")) {
        HarnessCompose h{Harness::kHarbor,
                         "main",
                         !t_.files.dockerfile.empty(),
                         t_.environment.docker_image,
                         t_.environment.cpus,
                         t_.environment.memory_mb};
        t_.compose = read_harness_compose(*text, td_.shown(compose), h, diags_);
        t_.files.compose_file = td_.abs(compose);
      }
    } else if (td_.find("environment/docker-compose.yml") == TaskDir::Found::kFile) {
      warn("environment/docker-compose.yml", "docker-compose.yml has no effect: Harbor reads docker-compose.yaml");
    }
    if (td_.find("environment/Dockerfile") != TaskDir::Found::kFile && td_.find(compose) != TaskDir::Found::kFile &&
        t_.environment.docker_image.empty()) {
      diags_.add(Diagnostic{td_.shown("environment"), 0, 0,
                            "environment/ has neither a Dockerfile nor a docker-compose.yaml",
                            "add environment/Dockerfile, or name a prebuilt image in [environment] docker_image"});
    }
  }

  void tests(bool multi) {
    auto found = td_.find("tests");
    if (found == TaskDir::Found::kMissing && !multi) {
      diags_.add(Diagnostic{td_.shown("tests/test.sh"), 0, 0, "the task has no tests/test.sh",
                            "tests/test.sh is the verifier: it writes /logs/verifier/reward.txt"});
      return;
    }
    if (found != TaskDir::Found::kDirectory || !td_.check_tree("tests", kTestsLimits, "tests/")) return;
    t_.files.tests_dir = td_.abs("tests");
    if (!multi) {
      if (td_.check_file("tests/test.sh", kMaxScriptBytes, "the verifier"))
        t_.files.test_script = td_.abs("tests/test.sh");
    } else {
      t_.files.test_script = script("tests/test.sh");  // the steps' fallback
    }
  }

  void step(StepConfig& s) {
    const std::string base = "steps/" + s.name;
    auto found = td_.find(base);
    if (found != TaskDir::Found::kDirectory) {
      if (found == TaskDir::Found::kMissing)
        error_at(s.where, "step '" + s.name + "' has no directory " + base + "/",
                 "a step's instruction.md and tests/ live under steps/<name>/");
      return;
    }
    s.instruction = instruction(base + "/instruction.md");
    if (td_.find(base + "/tests") == TaskDir::Found::kDirectory &&
        td_.check_tree(base + "/tests", kTestsLimits, base + "/tests/"))
      s.tests_dir = td_.abs(base + "/tests");
    s.test_script = script(base + "/tests/test.sh");
    if (s.test_script.empty()) s.test_script = t_.files.test_script;
    if (s.test_script.empty())
      error_at(s.where, "step '" + s.name + "' has no " + base + "/tests/test.sh, and the task has no tests/test.sh");
    if (td_.find(base + "/workdir") == TaskDir::Found::kDirectory &&
        td_.check_tree(base + "/workdir", kTestsLimits, base + "/workdir/")) {
      s.workdir_dir = td_.abs(base + "/workdir");
      s.setup_script = script(base + "/workdir/setup.sh");
    }
    if (td_.find(base + "/solution") == TaskDir::Found::kDirectory &&
        td_.check_tree(base + "/solution", kTestsLimits, base + "/solution/"))
      s.solution_script = script(base + "/solution/solve.sh");
  }

  // Directories under steps/ that no [[steps]] entry names are never run.
  void extra_steps() {
    if (td_.find("steps") != TaskDir::Found::kDirectory) return;
    std::set<std::string> declared;
    for (const auto& s : t_.steps) declared.insert(s.name);
    std::error_code ec;
    std::size_t seen = 0;
    for (fs::directory_iterator it(td_.abs("steps"), ec), end; !ec && it != end && seen < kMaxSteps * 2;
         it.increment(ec), ++seen) {
      std::string name = it->path().filename().string();
      if (declared.count(name)) continue;
      if (t_.steps.empty()) {
        warn("steps", "steps/ has no effect: task.toml has no [[steps]]");
        return;
      }
      warn("steps/" + name, "steps/" + name + " has no effect: no [[steps]] entry is named '" + name + "'");
    }
  }

  // Harbor builds a separate verifier from tests/ when it holds a Dockerfile or compose file.
  void separate_verifier() {
    bool separate = t_.verifier.mode == VerifierMode::kSeparate;
    for (const auto& s : t_.steps) separate = separate || s.verifier.mode == VerifierMode::kSeparate;
    if (!separate) return;
    for (std::string rel : {"tests/Dockerfile", "tests/docker-compose.yaml"}) {
      if (td_.find(rel) != TaskDir::Found::kFile) continue;
      diags_.add(Diagnostic{td_.shown(rel), 0, 0, "a verifier image of its own (" + rel + ") is not supported yet",
                            "the separate verifier runs in a fresh container of the task's own image"});
    }
  }

  // Services named by collect hooks and artifacts must be the task's.
  void services() {
    auto check = [&](const std::string& service, const SourceLocation& at, const std::string& what) {
      if (service.empty() || service == "main" || (t_.compose && t_.compose->find(service))) return;
      error_at(at, what + " names service '" + service + "', which the task does not have",
               "services are environment/docker-compose.yaml's; 'main' is the agent's");
    };
    std::vector<const VerifierConfig*> verifiers = {&t_.verifier};
    for (const auto& s : t_.steps) verifiers.push_back(&s.verifier);
    std::set<std::pair<int, int>> seen;  // a step inherits the task's hooks: report each once
    for (const auto* v : verifiers)
      for (const auto& h : v->collect)
        if (seen.insert({h.where.line, h.where.column}).second) check(h.service, h.where, "a collect hook");
    for (const auto& a : t_.artifacts) check(a.service, a.where, "an artifact");
    for (const auto& s : t_.steps)
      for (const auto& a : s.artifacts) check(a.service, a.where, "an artifact");
  }

  // An MCP server over HTTP is a service of the task's compose file, named by its name or one of
  // its aliases: forgectl connects to that service's address on the trial network and to
  // nothing else, so a url naming any other host is refused here.
  void mcp_services() {
    for (auto& m : t_.environment.mcp_servers) {
      if (m.transport == McpTransport::kStdio) continue;
      auto u = parse_mcp_url(m.url);
      if (!u) continue;  // reported with task.toml's keys
      m.service = service_named(u->host);
      if (m.service == t_.main_service)
        error_at(m.url_where, "MCP server '" + m.name + "': url \"" + m.url + "\" names '" + t_.main_service +
                                  "', the agent's own container",
                 "run a server in 'main' over stdio (transport = \"stdio\", command = …), or as a service of its own");
      else if (m.service.empty())
        error_at(m.url_where,
                 "MCP server '" + m.name + "': url \"" + m.url + "\" names host '" + u->host +
                     "', which is not a service of the task",
                 t_.compose ? "the host must be a service (or an alias of one) of environment/docker-compose.yaml; "
                              "forgectl connects to nothing else"
                            : "an MCP server over HTTP runs as a service of environment/docker-compose.yaml, which "
                              "the task does not have");
    }
  }

  // The compose service `host` names (its name or a network alias, compared without case); "".
  std::string service_named(const std::string& host) const {
    if (!t_.compose) return {};
    auto same = [&](const std::string& name) {
      if (name.size() != host.size()) return false;
      for (std::size_t i = 0; i < name.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(name[i])) != host[i]) return false;
      return true;
    };
    for (const auto& s : t_.compose->services) {
      if (same(s.name)) return s.name;
      for (const auto& [net, aliases] : s.networks)
        for (const auto& a : aliases)
          if (same(a)) return s.name;
    }
    return {};
  }

  TaskDir& td_;
  HarborTask& t_;
  Diagnostics& diags_;
};

}  // namespace

Result<HarborTask> load_harbor_task(const std::string& path) {
  std::string dir = path;
  switch (file_kind(path)) {
    case FileKind::kMissing:
      return fail(Errc::kNotFound, "'" + path + "' does not exist");
    case FileKind::kFile:
      if (fs::path(path).filename() != "task.toml") return fail(Errc::kInvalid, "'" + path + "' is not a task.toml");
      dir = fs::path(path).parent_path().string();
      if (dir.empty()) dir = ".";
      break;
    case FileKind::kOther:
      return fail(Errc::kInvalid, "'" + path + "' is neither a file nor a directory");
    case FileKind::kDirectory:
      break;
  }
  if (file_kind(join_path(dir, "task.toml")) == FileKind::kMissing)
    return fail(Errc::kNotFound, "'" + dir + "' has no task.toml");

  Diagnostics diags;
  TaskDir td(dir, diags);
  HarborTask t;
  t.dir = td.root();
  t.id = td.name();
  t.config_path = td.abs("task.toml");
  t.main_service = "main";
  const std::string toml_file = td.shown("task.toml");
  if (auto text = td.read("task.toml", kMaxConfigBytes, "the task config")) {
    TomlReader r(toml_file, diags);
    if (auto doc = r.parse(*text)) read_task_config(r, *doc, t);
  }
  FileChecks(td, t, diags).run();
  if (diags.has_errors()) return fail(diags.to_error(toml_file));
  t.warnings = diags.sorted(toml_file);
  return t;
}

}  // namespace forge::manifest
