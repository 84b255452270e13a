// Tolokaforge packs as forgectl reads them: each legacy key its pydantic models drop is one
// warning at file:line naming the key (the task still loads), a key forgectl would have to act on
// stays an error, and a project's tasks reach its shared files with "../../" but nothing beyond.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "manifest/task_parse.h"
#include "support/manifest_helpers.h"
#include "sweep/task_set.h"

using namespace forge;
using namespace forge::manifest;
using forge::test::has;

namespace {

constexpr const char* kHead = "task_id: t1\nname: T\ncategory: test\ndescription: A task.\ngrading: grading.yaml\n";

// A task directory: task.yaml = kHead (5 lines) + `rest`, grading.yaml = `grading`.
class LegacyTask : public forge::test::TempFiles {
 public:
  LegacyTask() : TempFiles("forgectl-tflegacy-") {}
  std::string task(const std::string& rest, const std::string& grading = "transcript_rules: {max_turns: 3}\n") const {
    write("grading.yaml", grading);
    return write("task.yaml", std::string(kHead) + rest);
  }
};

TaskConfig loads(const std::string& path) {
  auto t = load_task(path);
  REQUIRE_MESSAGE(t, (t ? "" : t.error().what()));
  return std::move(*t);
}

std::string errors(const std::string& path) {
  auto t = load_task(path);
  REQUIRE_FALSE(t);
  CHECK(t.error().code == Errc::kInvalid);
  return t.error().message;
}

// The task's only warning; fails unless there is exactly one, at `file`:`line`, naming `key`.
Diagnostic one_warning(const TaskConfig& t, const std::string& file, int line, const std::string& key) {
  std::string all;
  for (const auto& w : t.warnings) all += w.format() + "\n";
  INFO("warnings:\n" << all);
  REQUIRE(t.warnings.size() == 1);
  const Diagnostic& w = t.warnings.front();
  CHECK(w.severity == Severity::kWarning);
  CHECK(w.file == file);
  CHECK(w.line == line);
  CHECK(w.column > 0);
  CHECK(has(w.message, key));
  CHECK(has(w.format(), file + ":" + std::to_string(line) + ":"));
  CHECK(has(w.format(), ": warning: "));
  return w;
}

}  // namespace

TEST_CASE("tf legacy: a {role user content} scripted entry is one warning and is sent in order") {
  LegacyTask t;
  TaskConfig task = loads(t.task("user_simulator:\n"
                                 "  mode: scripted\n"
                                 "  scripted_flow:\n"
                                 "    - {role: user, content: \"Compute 2+2.\"}\n"
                                 "    - {default: \"###STOP###\"}\n"));
  one_warning(task, t.file("task.yaml"), 9, "user_simulator.scripted_flow[0]");
  REQUIRE(task.user_simulator.scripted_flow.size() == 2);
  CHECK(task.user_simulator.scripted_flow[0].user == "Compute 2+2.");

  // Another role's entry is not the user's: one warning that it has no effect, and it is not sent.
  task = loads(t.task("user_simulator:\n  mode: scripted\n  scripted_flow:\n"
                      "    - {user: \"Hi.\"}\n"
                      "    - {role: assistant, content: \"Hello.\"}\n"));
  Diagnostic w = one_warning(task, t.file("task.yaml"), 10, "scripted_flow[1]");
  CHECK(has(w.message, "has no effect"));
  CHECK(task.user_simulator.scripted_flow.size() == 1);
}

TEST_CASE("tf legacy: initial_state.workspace is one warning without effect") {
  LegacyTask t;
  TaskConfig task = loads(t.task("initial_state:\n"
                                 "  workspace:\n"
                                 "    files: [{path: notes.txt, content: hello}]\n"));
  Diagnostic w = one_warning(task, t.file("task.yaml"), 7, "initial_state.workspace");
  CHECK(has(w.message, "has no effect"));
  CHECK(task.initial_state.filesystem_copy.empty());
}

TEST_CASE("tf legacy: grading keys Tolokaforge drops are each one warning in grading.yaml") {
  LegacyTask t;
  const std::string g = t.file("grading.yaml");
  struct Case {
    std::string grading;
    int line;
    std::string key;
  };
  const std::vector<Case> cases = {
      {"transcript_rules: {max_turns: 3}\nstate_checks:\n  files: [{path: out.txt, contains: x}]\n", 3,
       "state_checks.files"},
      {"transcript_rules:\n  max_turns: 3\n  must_contain_phrases: [done]\n", 3, "transcript_rules.must_contain_phrases"},
      {"transcript_rules: {max_turns: 3}\nstate_checks:\n  hash:\n    enabled: false\n    description: the db\n", 5,
       "state_checks.hash.description"},
      {"state_checks:\n  jsonpaths:\n    - path: $.db.a\n      equals: 1\n      required: true\n", 5, ".required"},
      {"combine: {weights: {custom_checks: 1}}\ncustom_checks:\n  command: \"true\"\n  weight: 0.5\n", 4,
       "custom_checks.weight"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.key);
    TaskConfig task = loads(t.task("", c.grading));
    Diagnostic w = one_warning(task, g, c.line, c.key);
    CHECK(has(w.message, "has no effect"));
  }

  // Both weights: combine.weights is the one used, as in Tolokaforge.
  TaskConfig task = loads(t.task("", cases.back().grading));
  CHECK(task.grading.weights.at("custom_checks") == doctest::Approx(1.0));
}

TEST_CASE("tf legacy: JSONPath op and expected are read as the operator; reason as the description") {
  LegacyTask t;
  const std::string g = t.file("grading.yaml");
  TaskConfig task = loads(t.task("", "state_checks:\n"
                                     "  jsonpaths:\n"
                                     "    - path: $.db.orders[0].status\n"
                                     "      op: equals_ci\n"
                                     "      expected: PAID\n"));
  Diagnostic w = one_warning(task, g, 4, "op/expected");
  CHECK(has(w.message, "read as equals_ci"));
  REQUIRE(task.grading.state_checks.jsonpaths.size() == 1);
  CHECK(task.grading.state_checks.jsonpaths[0].op == StateAssertion::Op::kEqualsCi);
  CHECK(task.grading.state_checks.jsonpaths[0].expected_json == "\"PAID\"");

  task = loads(t.task("", "state_checks:\n"
                          "  jsonpaths:\n"
                          "    - path: $.db.a\n"
                          "      equals: 1\n"
                          "      reason: the order is paid\n"));
  w = one_warning(task, g, 5, ".reason");
  CHECK(has(w.message, "description"));
  CHECK(task.grading.state_checks.jsonpaths[0].description == "the order is paid");
}

TEST_CASE("tf legacy: keys forgectl would have to act on stay errors") {
  LegacyTask t;
  const std::string g = t.file("grading.yaml");
  // An operator forgectl does not have: the comparison would not happen.
  std::string text = errors(t.task("", "state_checks:\n  jsonpaths:\n    - {path: $.a, op: greater_than, expected: 1}\n"));
  INFO(text);
  CHECK(has(text, g + ":3:23: state_checks.jsonpaths[0].op: 'greater_than' is not an operator forgectl has"));
  text = errors(t.task("", "state_checks:\n  jsonpaths:\n    - {path: $.a, op: equals}\n"));
  CHECK(has(text, g + ":3:19: state_checks.jsonpaths[0]: op 'equals' needs 'expected'"));
  // An unknown key is a typo of one that acts, not a legacy key: still an error.
  text = errors(t.task("", "transcript_rules:\n  max_turns: 3\n  must_contian: [done]\n"));
  CHECK(has(text, g + ":3:3: transcript_rules: unsupported key 'must_contian' (hint: did you mean 'must_contain'?)"));
  text = errors(t.task("initial_state:\n  initialization_actions: [{tool: seed}]\n"));
  CHECK(has(text, t.file("task.yaml") + ":7:3: initial_state.initialization_actions is not supported"));
  // A {role, content} entry without its content is not a message at all.
  text = errors(t.task("user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {role: user}\n"));
  CHECK(has(text, t.file("task.yaml") + ":9:7: user_simulator.scripted_flow[0]: a {role, content} entry needs both"));
}

namespace {

// <root>/tasks/t1 and <root>/tasks/t2 with shared files at <root>; the task's lines from 6 on.
class Project : public forge::test::TempFiles {
 public:
  Project() : TempFiles("forgectl-project-") {
    write("wiki.md", "You are the shop's agent. Policy: refunds need a receipt.\n");
    write("data/db.json", "{\"orders\": [{\"id\": \"O-1\", \"status\": \"open\"}]}\n");
    write("tasks/t2/task.yaml", "task_id: t2\nname: T2\ncategory: test\ndescription: B.\ngrading: grading.yaml\n");
    write("tasks/t2/grading.yaml", "transcript_rules: {max_turns: 3}\n");
  }
  std::string task(const std::string& rest) const {
    write("tasks/t1/grading.yaml", "transcript_rules: {max_turns: 3}\n");
    return write("tasks/t1/task.yaml", std::string(kHead) + rest);
  }
};

}  // namespace

TEST_CASE("tf project: a task reaches the project's wiki and data with ../../") {
  Project p;
  TaskConfig task = loads(p.task("system_prompt: ../../wiki.md\ninitial_state: {json_db: ../../data/db.json}\n"));
  CHECK(task.system_prompt == "You are the shop's agent. Policy: refunds need a receipt.\n");
  CHECK(task.initial_state.tables.at("orders").size() == 1);
  CHECK(task.warnings.empty());

  // Check helpers shared by the project: custom_checks.dir beside tasks/.
  p.write("checks/test.sh", "exit 0\n");
  p.write("tasks/t1/grading.yaml", "custom_checks: {command: \"sh /tests/test.sh\", dir: ../../checks}\n");
  p.write("tasks/t1/task.yaml", std::string(kHead));
  task = loads(p.file("tasks/t1/task.yaml"));
  CHECK(task.grading.custom_checks.dir == "../../checks");
}

TEST_CASE("tf project: a path above the project root is refused naming file and key") {
  Project p;
  std::string f = p.file("tasks/t1/task.yaml");
  std::string text = errors(p.task("system_prompt: ../../../x\n"));
  INFO(text);
  CHECK(has(text, f + ":6:16: system_prompt: '../../../x' is outside the project"));
  // Another task's files are no shared files.
  text = errors(p.task("initial_state: {json_db: ../t2/grading.yaml}\n"));
  CHECK(has(text, f + ":6:26: initial_state.json_db: '../t2/grading.yaml' is in another task's directory"));
  // A task of its own has no project to reach into.
  LegacyTask alone;
  text = errors(alone.task("system_prompt: ../shared-wiki.md\n"));
  CHECK(has(text, alone.file("task.yaml") + ":6:16: system_prompt: '../shared-wiki.md' is outside the task directory"));
}

TEST_CASE("tf project: a symlink leading out of the project is refused, not followed") {
  Project p;
  forge::test::TempFiles outside("forgectl-outside-");
  outside.write("secret.md", "the host's secret\n");
  std::filesystem::create_symlink(outside.file("secret.md"), p.file("wiki-link.md"));
  std::string f = p.file("tasks/t1/task.yaml");
  std::string text = errors(p.task("system_prompt: ../../wiki-link.md\n"));
  INFO(text);
  CHECK(has(text, f + ":6:16: system_prompt: '../../wiki-link.md' goes through a symlink"));
  CHECK_FALSE(has(text, "the host's secret"));

  // A symlink in the task directory that climbs out of the project: refused as well.
  p.write("tasks/t1/fixtures/.keep", "");
  // fixtures/ → t1 → tasks → the project → its parent, where `outside` is.
  std::string beside = std::filesystem::path(outside.dir()).filename().string();
  std::filesystem::create_symlink("../../../../" + beside + "/secret.md", p.file("tasks/t1/fixtures/db.json"));
  text = errors(p.task("initial_state: {json_db: fixtures/db.json}\n"));
  CHECK(has(text, f + ":6:26: initial_state.json_db: 'fixtures/db.json' leads outside the task directory"));
}

TEST_CASE("tf project: the project directory is a task pack; warnings do not fail it") {
  Project p;
  p.task("system_prompt: ../../wiki.md\ninitial_state: {workspace: {files: []}}\n");
  p.write("outputs/old/task.yaml", "not: a task\n");  // an old run's copy beside tasks/: not discovered
  trial::PreflightInput in;
  auto set = sweep::load_task_set({p.dir()}, "**/task.yaml", in);
  INFO(set.report());
  CHECK(set.ok());
  CHECK(set.tasks.size() == 2);
  auto warnings = set.warnings();
  REQUIRE(warnings.size() == 1);
  CHECK(has(warnings[0].text(), p.file("tasks/t1/task.yaml") + ":7:"));
  CHECK(has(warnings[0].text(), "warning: initial_state.workspace has no effect"));
}

TEST_CASE("tf legacy: comparison operators load in every spelling; an operand that cannot work names file and key") {
  LegacyTask t;
  const std::string g = t.file("grading.yaml");
  TaskConfig task = loads(t.task("", "state_checks:\n"
                                     "  jsonpaths:\n"
                                     "    - {path: $.db.a, gte: 3}\n"
                                     "    - {path: $.db.a, op: ne, expected: closed}\n"
                                     "    - {path: $.db.a, matches: \"^O-\\\\d+$\"}\n"
                                     "    - {path: $.db.a, in_: [open, pending]}\n"
                                     "    - {path: $.db.a, op: not_exists}\n"
                                     "    - {path: $.db.a, exists: false}\n"
                                     "    - {path: $.db.a, lt: \"10.5\"}\n"
                                     "    - {path: $.db.a, date_lt: 2026-03-01}\n"));
  const auto& jp = task.grading.state_checks.jsonpaths;
  REQUIRE(jp.size() == 8);
  CHECK(jp[0].op == StateAssertion::Op::kGte);
  CHECK(jp[0].expected_json == "3");
  CHECK(jp[1].op == StateAssertion::Op::kNotEquals);
  CHECK(jp[1].expected_json == "\"closed\"");
  CHECK(jp[2].op == StateAssertion::Op::kRegex);
  CHECK(jp[3].op == StateAssertion::Op::kIn);
  CHECK(jp[4].op == StateAssertion::Op::kNotExists);
  CHECK(jp[5].op == StateAssertion::Op::kNotExists);
  CHECK(jp[6].op == StateAssertion::Op::kLt);
  CHECK(jp[7].op == StateAssertion::Op::kDateLt);
  CHECK(jp[7].expected_json == "\"2026-03-01\"");

  std::string text = errors(t.task("", "state_checks:\n"
                                       "  jsonpaths:\n"
                                       "    - {path: $.a, op: between, expected: 1}\n"
                                       "    - {path: $.a, regex: \"(?<=x)y\"}\n"
                                       "    - {path: $.a, in: open}\n"
                                       "    - {path: $.a, not_in: {a: 1}}\n"
                                       "    - {path: $.a, gt: soon}\n"
                                       "    - {path: $.a, len_gt: -1}\n"
                                       "    - {path: $.a, exists: maybe}\n"
                                       "    - {path: $.a, date_gte: \"2026-13-01\"}\n"));
  INFO(text);
  CHECK(has(text, g + ":3:23: state_checks.jsonpaths[0].op: 'between' is not an operator forgectl has (exists, "));
  CHECK(has(text, g + ":4:26: state_checks.jsonpaths[1].regex is not a regular expression that compiles: "));
  CHECK(has(text, g + ":5:23: state_checks.jsonpaths[2].in needs a list of the values to look for (got a string)"));
  CHECK(has(text, g + ":6:27: state_checks.jsonpaths[3].not_in needs a list of the values to look for (got a mapping)"));
  CHECK(has(text, g + ":7:23: state_checks.jsonpaths[4].gt compares numbers; give a number (got a string)"));
  CHECK(has(text, g + ":8:27: state_checks.jsonpaths[5].len_gt compares a length"));
  CHECK(has(text, g + ":9:27: state_checks.jsonpaths[6].exists"));
  CHECK(has(text, g + ":10:29: state_checks.jsonpaths[7].date_gte compares dates; give an ISO-8601 date"));
}

TEST_CASE("tf legacy: a task with comparison operators that enables a tool nobody provides is refused, naming it") {
  LegacyTask t;
  t.task("tools: {agent: {enabled: [read_file, frobnicate]}}\n",
         "state_checks:\n  jsonpaths:\n    - {path: $.db.a, gte: 3}\n    - {path: $.db.a, not_in: [x]}\n");
  trial::PreflightInput in;
  auto set = sweep::load_task_set({t.dir()}, "**/task.yaml", in);
  INFO(set.report());
  CHECK_FALSE(set.ok());
  CHECK(has(set.report(), "tool 'frobnicate' is not a forgectl built-in and the task declares no mcp_server"));
  CHECK_FALSE(has(set.report(), "gte"));
}
