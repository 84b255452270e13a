// Terminal-Bench 1 tasks, pytest's output as their verdict, and telling task kinds apart in a
// dataset that mixes them.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "manifest/harbor/pytest_output.h"
#include "manifest/harbor/tb1_parse.h"
#include "manifest/task_kind.h"
#include "support/manifest_helpers.h"
#include "support/paths.h"

using namespace forge;
using namespace forge::manifest;
using forge::test::has;

namespace {

std::string data(const std::string& rel) { return forge::test::test_data_dir() + "/harbor/" + rel; }

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

PytestReport pytest(const std::string& name) { return parse_pytest_output(text_of(data("pytest/" + name))); }

// A Terminal-Bench 1 task under /tmp with valid files; task.yaml is written by the test.
class TempTb1 : public forge::test::TempFiles {
 public:
  TempTb1() : TempFiles("forgectl-tb1-") {
    write("Dockerfile", "FROM debian:12-slim\n");
    write("docker-compose.yaml", "services:\n  client:\n    build:\n      dockerfile: Dockerfile\n");
    write("run-tests.sh", "#!/bin/bash\npytest -rA\n");
  }
  std::string yaml(const std::string& text) const {
    write("task.yaml", text);
    return dir();
  }
};

std::string errors(const std::string& path) {
  auto t = load_tb1_task(path);
  REQUIRE_FALSE(t);
  CHECK(t.error().code == Errc::kInvalid);
  return t.error().message;
}

}  // namespace

TEST_CASE("tb1: a Terminal-Bench 1 task in the HarborTask shape") {
  auto loaded = load_tb1_task(data("tb1-task"));
  REQUIRE_MESSAGE(loaded, (loaded ? "" : loaded.error().what()));
  const HarborTask& t = *loaded;
  CHECK(t.format == HarborFormat::kTerminalBench1);
  CHECK(t.id == "tb1-task");
  CHECK(has(t.instruction, "Write their sum to /app/sum.txt."));
  CHECK(t.difficulty == "easy");
  CHECK(t.category == "data-processing");
  CHECK(t.tags == std::vector<std::string>{"arithmetic", "shell"});
  REQUIRE(t.authors.size() == 1);
  CHECK(t.authors[0].name == "Ada Tester");
  CHECK(t.authors[0].email == "ada@example.org");
  CHECK(has(t.metadata_json, "\"junior_time_estimate_min\":10"));
  CHECK(t.agent.timeout_sec == 240.0);
  CHECK(t.verifier.timeout_sec == 45.0);
  CHECK(t.verifier.user.empty());  // forgectl's verifier, not Terminal-Bench's root shell
  CHECK(t.environment.network.mode == NetworkMode::kPublic);
  CHECK(t.main_service == "client");
  CHECK(t.reward_source == RewardSource::kPytestOutput);
  REQUIRE(t.tb1);
  CHECK(t.tb1->expert_time_estimate_min == 3);
  CHECK(t.files.environment_dir == t.dir);
  CHECK(t.files.test_script == t.dir + "/run-tests.sh");
  CHECK(t.files.tests_dir == t.dir + "/tests");
  CHECK(t.files.solution_script == t.dir + "/solution.sh");

  // The compose file's T_BENCH_ plumbing is gone; what is left is forgectl's compose subset.
  REQUIRE(t.compose);
  const ComposeService* client = t.compose->find("client");
  REQUIRE(client);
  CHECK(client->image.empty());
  CHECK(std::filesystem::equivalent(client->build->context, t.dir));
  CHECK(client->environment == std::vector<std::string>{"TEST_DIR=/tests"});

  // disable_asciinema has no effect; the Dockerfile copies a file of tests/ into the agent's image.
  REQUIRE(t.warnings.size() == 2);
  CHECK(has(t.warnings[0].format(), "task.yaml:13:1: warning: 'disable_asciinema' has no effect"));
  CHECK(has(t.warnings[1].format(), "Dockerfile:4:1: warning: the image the agent works in gets 'tests/fixture.txt'"));
}

TEST_CASE("tb1: errors and refusals name file, line and key") {
  TempTb1 d;
  const std::string head = "instruction: Sum the numbers.\ndifficulty: easy\n";
  SUBCASE("a mistyped key") {
    CHECK(has(errors(d.yaml(head + "max_agent_timout_sec: 30\n")),
              "task.yaml:3:1: unknown key 'max_agent_timout_sec' (hint: did you mean 'max_agent_timeout_sec'?)"));
  }
  SUBCASE("a key Terminal-Bench ignores") {
    auto t = load_tb1_task(d.yaml(head + "reviewer: someone\n"));
    REQUIRE(t);
    REQUIRE(t->warnings.size() == 1);
    CHECK(has(t->warnings[0].format(), "task.yaml:3:1: warning: 'reviewer' is not a key Terminal-Bench reads"));
  }
  SUBCASE("what forgectl cannot honour") {
    std::string e = errors(d.yaml(head + "run_tests_in_same_shell: true\nparser_name: swebench\n"));
    CHECK(has(e, "task.yaml:3:26: run_tests_in_same_shell: true is not supported"));
    CHECK(has(e, "task.yaml:4:14: parser_name 'swebench' is not supported yet"));
  }
  SUBCASE("types, a missing instruction and difficulty") {
    std::string e = errors(d.yaml("max_test_timeout_sec: soon\ntags: shell\n"));
    CHECK(has(e, "task.yaml:1:23: 'max_test_timeout_sec' must be a number, got 'soon'"));
    CHECK(has(e, "task.yaml:2:7: 'tags' must be a list"));
    CHECK(has(e, "the task has no 'instruction'"));
    CHECK(has(e, "the task has no 'difficulty'"));
  }
  SUBCASE("a compose file without client, and no run-tests.sh") {
    d.write("docker-compose.yaml", "services:\n  agent:\n    build: .\n");
    std::filesystem::remove(d.file("run-tests.sh"));
    std::string e = errors(d.yaml(head));
    CHECK(has(e, "the compose file has no service 'client'"));
    CHECK(has(e, "run-tests.sh: the test runner 'run-tests.sh' does not exist"));
  }
}

TEST_CASE("pytest output: Terminal-Bench's reading, without its holes") {
  SUBCASE("all pass") {
    PytestReport r = pytest("all-pass.txt");
    CHECK(r.has_summary);
    REQUIRE(r.tests.size() == 3);
    CHECK(r.tests[0].id == "../tests/test_outputs.py::test_sum_written");
    CHECK(r.tests[0].name == "test_sum_written");
    CHECK(r.tests[2].name == "test_sum_type[int]");
    REQUIRE(r.counts);
    CHECK(r.counts->passed == 3);
    CHECK(r.resolved);
    CHECK(r.reward == 1.0);
    CHECK(r.reason.empty());
  }
  SUBCASE("some fail") {
    PytestReport r = pytest("some-fail.txt");
    REQUIRE(r.tests.size() == 3);
    CHECK(r.tests[2].status == PytestStatus::kFailed);
    CHECK(r.tests[2].name == "test_sum_correct");  // the " - reason" is not part of the name
    CHECK_FALSE(r.resolved);
    CHECK(r.reward == 0.0);
    CHECK(r.reason == "1 of 3 tests failed: test_sum_correct");
    CHECK(r.counts->failed == 1);
  }
  SUBCASE("errors fail; a skip passes, as in Terminal-Bench") {
    PytestReport r = pytest("errors.txt");
    REQUIRE(r.tests.size() == 3);
    CHECK(r.tests[1].status == PytestStatus::kSkipped);
    CHECK(r.tests[1].passed());
    CHECK(r.tests[2].status == PytestStatus::kError);
    CHECK(r.tests[2].name == "test_sum_written");
    CHECK(r.counts->errors == 1);
    CHECK_FALSE(r.resolved);
    CHECK(has(r.reason, "test_sum_written"));
  }
  SUBCASE("no summary at all") {
    PytestReport r = pytest("no-summary.txt");
    CHECK_FALSE(r.has_summary);
    CHECK(r.tests.empty());
    CHECK_FALSE(r.counts);
    CHECK_FALSE(r.resolved);
    CHECK(r.reward == 0.0);
    CHECK(has(r.reason, "no pytest summary in the output"));
  }
  SUBCASE("only the counts line (pytest without -rA)") {
    PytestReport r = pytest("counts-only.txt");
    CHECK_FALSE(r.has_summary);
    CHECK(r.counts->passed == 4);
    CHECK(r.resolved);
  }
  SUBCASE("an empty summary block is not a pass") {
    PytestReport r = parse_pytest_output("=== short test summary info ===\nsomething else\n");
    CHECK(r.has_summary);
    CHECK_FALSE(r.resolved);
    CHECK(r.reason == "the short test summary lists no test result");
  }
  SUBCASE("a summary that hides failures the counts report") {
    PytestReport r = parse_pytest_output(
        "\x1b[1m===== short test summary info =====\x1b[0m\r\nPASSED t.py::a\r\n===== 1 failed, 1 passed in 0.1s "
        "=====\n");
    REQUIRE(r.tests.size() == 1);
    CHECK_FALSE(r.resolved);
    CHECK(has(r.reason, "pytest reports 1 failed or in error"));
  }
}

TEST_CASE("task kinds: detection, and a dataset that mixes them") {
  CHECK(*detect_task_kind(data("complete-1.4")) == TaskKind::kHarbor);
  CHECK(*detect_task_kind(data("tb1-task")) == TaskKind::kTerminalBench1);
  CHECK(*detect_task_kind(forge::test::test_data_dir() + "/manifest/task_default") == TaskKind::kTolokaforge);
  CHECK(*detect_task_kind(data("pytest")) == TaskKind::kNone);
  CHECK(detect_task_kind(data("nope")).error().code == Errc::kNotFound);

  auto tasks = list_dataset(data(""));
  REQUIRE_MESSAGE(tasks, (tasks ? "" : tasks.error().what()));
  std::vector<std::string> names;
  for (const auto& p : *tasks) names.push_back(std::filesystem::path(p).filename().string());
  CHECK(names == std::vector<std::string>{"complete-1.4", "compose-main", "error-gpus", "error-no-tests",
                                          "error-symlink", "error-types", "error-typo", "legacy-1.1", "multi-step",
                                          "tb1-task", "warning-ignored"});
  CHECK(list_dataset(data(""), 3).error().code == Errc::kInvalid);

  forge::test::TempFiles d("forgectl-dataset-");
  d.write("a/task.toml", "schema_version = \"1.4\"\n");
  d.write("b/task.yaml", "task_id: b\ninstruction: both\n");
  CHECK(has(list_dataset(d.dir()).error().message, "has both task_id (Tolokaforge) and instruction"));
  std::filesystem::remove_all(d.file("b"));
  std::filesystem::create_symlink(data("tb1-task"), d.file("linked"));
  CHECK(has(list_dataset(d.dir()).error().message, "is a symlink that leads outside the dataset"));
}

TEST_CASE("task kinds: Terminal-Bench 1's files beside a stray task.toml are TB1's until Harbor's are complete") {
  TempTb1 t;
  t.yaml("instruction: Write 42 to answer.txt.\ndifficulty: easy\n");
  t.write("task.toml", "version = \"1.0\"\n");
  t.write("environment/Dockerfile", "FROM debian:12-slim\n");
  t.write("tests/test_outputs.py", "def test_answer():\n    pass\n");
  CHECK(*detect_task_kind(t.dir()) == TaskKind::kTerminalBench1);
  CHECK(std::string(config_file_of(TaskKind::kTerminalBench1)) == "task.yaml");
  // Loaded the TB1 way, the task.toml a warning naming it.
  auto loaded = load_tb1_task(t.dir());
  REQUIRE_MESSAGE(loaded, (loaded ? "" : loaded.error().what()));
  bool warned = false;
  for (const auto& w : loaded->warnings) warned = warned || has(w.format(), "task.toml has no effect");
  CHECK(warned);

  // One of Harbor's own files makes it Harbor's (whose loader then says what is missing); both too.
  t.write("instruction.md", "Write 42.\n");
  CHECK(*detect_task_kind(t.dir()) == TaskKind::kHarbor);
  t.write("tests/test.sh", "echo 1 > /logs/verifier/reward.txt\n");
  CHECK(*detect_task_kind(t.dir()) == TaskKind::kHarbor);
  std::filesystem::remove(t.file("instruction.md"));
  CHECK(*detect_task_kind(t.dir()) == TaskKind::kHarbor);

  // Without run-tests.sh, or with a task.yaml that is not TB1's, task.toml stands for the task.
  std::filesystem::remove(t.file("tests/test.sh"));
  CHECK(*detect_task_kind(t.dir()) == TaskKind::kTerminalBench1);
  t.yaml("task_id: tf\n");
  CHECK(*detect_task_kind(t.dir()) == TaskKind::kHarbor);
  t.yaml("instruction: Write 42 to answer.txt.\ndifficulty: easy\n");
  std::filesystem::remove(t.file("run-tests.sh"));
  CHECK(*detect_task_kind(t.dir()) == TaskKind::kHarbor);
}
