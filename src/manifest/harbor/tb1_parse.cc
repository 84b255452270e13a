// Loads a Terminal-Bench 1 task: task.yaml's keys (Terminal-Bench's Task model), then its
// compose file, run-tests.sh, tests/ and solution, each confined to the directory and bounded.
#include "manifest/harbor/tb1_parse.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>

#include "core/json.h"
#include "manifest/files.h"
#include "manifest/harbor/harness_compose.h"
#include "manifest/task_dir.h"
#include "manifest/yaml_reader.h"

namespace forge::manifest {

namespace fs = std::filesystem;

namespace {

constexpr double kMaxSeconds = 30.0 * 24 * 3600;

const std::vector<std::string> kKeys = {"instruction",
                                        "author_name",
                                        "author_email",
                                        "difficulty",
                                        "category",
                                        "tags",
                                        "parser_name",
                                        "max_agent_timeout_sec",
                                        "max_test_timeout_sec",
                                        "run_tests_in_same_shell",
                                        "disable_asciinema",
                                        "estimated_duration_sec",
                                        "expert_time_estimate_min",
                                        "junior_time_estimate_min"};
const std::vector<std::string> kParsers = {"pytest", "swebench", "swelancer", "mlebench", "sweperf"};
const std::vector<std::string> kDifficulties = {"easy", "medium", "hard", "unknown"};

void warn(YamlReader& r, const Field& f, std::string message, std::string hint = {}) {
  SourceLocation at = r.location(f, At::kKey);
  r.diagnostics().add(Diagnostic{at.file, at.line, at.column, std::move(message), std::move(hint), Severity::kWarning});
}

std::optional<double> seconds(YamlReader& r, const Field& f) {
  auto v = r.number(f, "");
  if (v && (*v <= 0 || *v > kMaxSeconds)) {
    r.error(f, "'" + f.key + "' must be more than 0 and at most 30 days");
    return std::nullopt;
  }
  return v;
}

// One task.yaml key into `t`; `meta` collects what reports keep.
void read_key(YamlReader& r, const Field& e, HarborTask& t, json::Writer& meta) {
  const std::string& k = e.key;
  Tb1Settings& tb1 = *t.tb1;
  if (k == "instruction") {
    auto v = r.string(e, "");
    if (v && v->find_first_not_of(" \t\r\n") == std::string::npos)
      r.error(e, "'instruction' is empty");
    else if (v)
      t.instruction = *v;
  } else if (k == "author_name" || k == "author_email" || k == "category") {
    if (auto v = r.string(e, "")) {
      meta.field(k, *v);
      if (k == "category")
        t.category = *v;
      else if (t.authors.empty())
        t.authors.push_back(Author{k == "author_name" ? *v : "", k == "author_email" ? *v : ""});
      else
        (k == "author_name" ? t.authors[0].name : t.authors[0].email) = *v;
    }
  } else if (k == "difficulty") {
    auto v = r.string(e, "");
    if (v && std::find(kDifficulties.begin(), kDifficulties.end(), *v) == kDifficulties.end()) {
      std::string close = closest_match(*v, kDifficulties);
      r.error(e, "'difficulty' must be easy, medium, hard or unknown, got '" + *v + "'",
              close.empty() ? "" : "did you mean '" + close + "'?");
    } else if (v) {
      t.difficulty = *v;
      meta.field(k, *v);
    }
  } else if (k == "tags") {
    if (auto v = r.strings(e, "")) {
      t.tags = *v;
      meta.field(k, *v);
    }
  } else if (k == "parser_name") {
    auto v = r.string(e, "");
    if (v && *v != "pytest") {
      bool known = std::find(kParsers.begin(), kParsers.end(), *v) != kParsers.end();
      std::string close = known ? "" : closest_match(*v, kParsers);
      r.error(e, "parser_name '" + *v + "' is " + (known ? "not supported yet" : "not one of Terminal-Bench's parsers"),
              close.empty() ? "forgectl reads pytest's output (parser_name: pytest)" : "did you mean '" + close + "'?");
    }
  } else if (k == "max_agent_timeout_sec") {
    if (auto v = seconds(r, e)) t.agent.timeout_sec = v;
  } else if (k == "max_test_timeout_sec") {
    if (auto v = seconds(r, e)) t.verifier.timeout_sec = *v;
  } else if (k == "run_tests_in_same_shell") {
    if (auto v = r.boolean(e, ""); v && *v)
      r.error(e, "run_tests_in_same_shell: true is not supported",
              "forgectl runs the tests in a shell of their own, after the agent; the agent's shell state is gone");
  } else if (k == "disable_asciinema") {
    if (r.boolean(e, "")) warn(r, e, "'disable_asciinema' has no effect: forgectl records no asciinema");
  } else if (k == "estimated_duration_sec") {
    if (auto v = seconds(r, e)) tb1.estimated_duration_sec = v;
  } else if (k == "expert_time_estimate_min" || k == "junior_time_estimate_min") {
    if (e.is_null()) return;
    auto v = r.integer(e, "");
    if (v && *v < 0)
      r.error(e, "'" + k + "' must not be negative");
    else if (v)
      (k == "expert_time_estimate_min" ? tb1.expert_time_estimate_min : tb1.junior_time_estimate_min) = v;
    if (v) meta.field(k, *v);
  } else if (std::string close = closest_match(k, kKeys); !close.empty()) {
    r.error(e, "unknown key '" + k + "'", "did you mean '" + close + "'?", At::kKey);
  } else {
    warn(r, e, "'" + k + "' is not a key Terminal-Bench reads; it has no effect",
         "Terminal-Bench ignores keys it does not know, and so does forgectl");
  }
}

// A Dockerfile that copies tests or the solution puts grading files where the agent can read them.
void check_dockerfile(const std::string& text, const std::string& shown, Diagnostics& diags) {
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::istringstream words(line);
    std::string word;
    words >> word;
    std::transform(word.begin(), word.end(), word.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    if (word != "COPY" && word != "ADD") continue;
    std::vector<std::string> args;
    while (words >> word)
      if (word.rfind("--", 0) != 0) args.push_back(word);
    for (std::size_t i = 0; i + 1 < args.size(); ++i) {
      std::string src = fs::path(args[i]).lexically_normal().string();
      std::string first = fs::path(src).begin()->string();
      if (first == "tests" || src == "run-tests.sh" || first.rfind("solution", 0) == 0) {
        diags.add(Diagnostic{
            shown, n, 1, "the image the agent works in gets '" + args[i] + "', a grading file the agent can read",
            "copy only the task's inputs into the image; tests reach /tests after the agent", Severity::kWarning});
      }
    }
  }
}

void check_files(TaskDir& td, HarborTask& t, Diagnostics& diags) {
  // The compose file builds the Dockerfile with the task directory as its context.
  if (td.check_tree(".", kContextLimits, "the task directory")) t.files.environment_dir = td.root();
  if (td.find("Dockerfile") == TaskDir::Found::kFile) {
    if (auto text = td.read("Dockerfile", kMaxScriptBytes, "the Dockerfile")) {
      t.files.dockerfile = td.abs("Dockerfile");
      check_dockerfile(*text, td.shown("Dockerfile"), diags);
    }
  }
  // Tolokaforge's Terminal-Bench layout keeps it in environment/, which the compose file names.
  if (t.files.dockerfile.empty() && td.find("environment/Dockerfile") == TaskDir::Found::kFile) {
    if (auto text = td.read("environment/Dockerfile", kMaxScriptBytes, "the Dockerfile"))
      check_dockerfile(*text, td.shown("environment/Dockerfile"), diags);
  }
  if (auto text = td.read("docker-compose.yaml", kMaxConfigBytes, "the compose file")) {
    HarnessCompose h{Harness::kTerminalBench1, "client", !t.files.dockerfile.empty(), "", std::nullopt, std::nullopt};
    t.compose = read_harness_compose(*text, td.shown("docker-compose.yaml"), h, diags);
    t.files.compose_file = td.abs("docker-compose.yaml");
  }
  if (td.check_file("run-tests.sh", kMaxScriptBytes, "the test runner")) t.files.test_script = td.abs("run-tests.sh");
  if (td.find("task.toml") == TaskDir::Found::kFile)
    diags.add(Diagnostic{td.shown("task.toml"), 0, 0,
                         "task.toml has no effect: with run-tests.sh and no instruction.md or tests/test.sh, this is a "
                         "Terminal-Bench 1 task, read from task.yaml",
                         "add instruction.md and tests/test.sh to run it as a Harbor task (docs/harbor.md)",
                         Severity::kWarning});
  if (td.find("tests") == TaskDir::Found::kDirectory && td.check_tree("tests", kTestsLimits, "tests/"))
    t.files.tests_dir = td.abs("tests");
  if (td.find("solution.sh") == TaskDir::Found::kFile) {
    if (td.check_file("solution.sh", kMaxScriptBytes, "the solution")) t.files.solution_script = td.abs("solution.sh");
  } else if (td.find("solution.yaml") == TaskDir::Found::kFile) {
    diags.add(Diagnostic{td.shown("solution.yaml"),
                         0,
                         0,
                         "solution.yaml has no effect: forgectl's oracle runs solution.sh, not keystrokes",
                         {},
                         Severity::kWarning});
  }
}

}  // namespace

Result<HarborTask> load_tb1_task(const std::string& path) {
  std::string dir = path;
  switch (file_kind(path)) {
    case FileKind::kMissing:
      return fail(Errc::kNotFound, "'" + path + "' does not exist");
    case FileKind::kFile:
      dir = fs::path(path).parent_path().string();
      if (dir.empty()) dir = ".";
      break;
    case FileKind::kOther:
      return fail(Errc::kInvalid, "'" + path + "' is neither a file nor a directory");
    case FileKind::kDirectory:
      break;
  }
  if (file_kind(join_path(dir, "task.yaml")) == FileKind::kMissing)
    return fail(Errc::kNotFound, "'" + dir + "' has no task.yaml");

  Diagnostics diags;
  TaskDir td(dir, diags);
  HarborTask t;
  t.format = HarborFormat::kTerminalBench1;
  t.dir = td.root();
  t.id = td.name();
  t.config_path = td.abs("task.yaml");
  t.main_service = "client";
  t.reward_source = RewardSource::kPytestOutput;
  t.tb1 = Tb1Settings{};
  t.agent.timeout_sec = 360;  // Terminal-Bench's defaults
  t.verifier.timeout_sec = 60;
  // Terminal-Bench runs its tests in a root shell; a TB1 task cannot name a user, so forgectl's
  // verifier (uid 2000, never root: trial/harbor_trial.h) runs them.
  const std::string yaml_file = td.shown("task.yaml");
  if (auto text = td.read("task.yaml", kMaxConfigBytes, "the task config")) {
    YamlReader r(yaml_file, diags);
    if (auto root = r.parse(*text)) {
      json::Writer meta;
      meta.begin_object();
      bool has_instruction = false, has_difficulty = false, has_descriptions = false;
      for (const auto& e : r.mapping(*root, "")) {
        has_instruction = has_instruction || e.key == "instruction";
        has_difficulty = has_difficulty || e.key == "difficulty";
        has_descriptions = has_descriptions || e.key == "descriptions";
        read_key(r, e, t, meta);
      }
      meta.end_object();
      t.metadata_json = meta.take();
      if (!has_instruction)
        r.error(*root, "the task has no 'instruction'",
                has_descriptions ? "this is Terminal-Bench's older format (descriptions); forgectl reads instruction"
                                 : "Terminal-Bench 1 tasks give the agent's instruction inline");
      if (!has_difficulty) r.error(*root, "the task has no 'difficulty'", "easy, medium, hard or unknown");
    }
  }
  check_files(td, t, diags);
  if (diags.has_errors()) return fail(diags.to_error(yaml_file));
  t.warnings = diags.sorted(yaml_file);
  return t;
}

}  // namespace forge::manifest
