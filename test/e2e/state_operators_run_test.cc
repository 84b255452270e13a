// Comparison operators graded through the real path: `forgectl run` on the local executor (no
// Docker engine), the oracle writing files that path_glob assertions with gte, lt, in, regex and
// not_exists then judge; grade.yaml shows each reason with the operator and both values.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "results/trial_record.h"
#include "support/manifest_helpers.h"
#include "support/process.h"

using namespace forge;
using namespace forge::test;

namespace {

std::string write_task(const TempFiles& t, const std::string& tools) {
  t.write("tasks/counted/grading.yaml",
          "state_checks:\n  jsonpaths:\n"
          "    - {path_glob: /env/fs/agent-visible/count.txt, gte: 40}\n"
          "    - {path_glob: /env/fs/agent-visible/count.txt, op: lt, expected: 10}\n"
          "    - {path_glob: /env/fs/agent-visible/status.txt, in: [shipped, delivered]}\n"
          "    - {path_glob: /env/fs/agent-visible/status.txt, matches: \"^pend\"}\n"
          "    - {path_glob: /env/fs/agent-visible/draft.txt, not_exists: true}\n");
  t.write("tasks/counted/task.yaml",
          "task_id: counted\nname: Counted\ncategory: local\ndescription: d\n"
          "initial_user_message: Count the parcels.\n"
          "tools: {agent: {enabled: " +
              tools +
              "}}\n"
              "grading: grading.yaml\n"
              "solution:\n  tool_calls:\n"
              "    - {name: write_file, arguments: {path: count.txt, content: \"42\\n\"}}\n"
              "    - {name: write_file, arguments: {path: status.txt, content: shipped}}\n");
  return t.file("tasks/counted");
}

std::map<std::string, std::string> no_docker_env() {
  return {{"DOCKER_HOST", "unix:///nonexistent/forgectl-e2e/docker.sock"}};
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("run: comparison operators grade files through the real path; each reason shows operator and values") {
  TempFiles t("forgectl-e2e-ops-");
  std::string task = write_task(t, "[write_file, read_file]"), out = t.file("run");
  auto r = forgectl_run({"run", task, "--agent", "oracle", "--executor", "local", "--out", out}, Millis(120000),
                        no_docker_env());
  INFO(r.text());
  REQUIRE(r.code == 0);
  auto log = results::read_trials_jsonl(out + "/trials.jsonl");
  REQUIRE(log.has_value());
  REQUIRE(log->trials.size() == 1);
  CHECK(log->trials[0].graded());
  CHECK(log->trials[0].score == doctest::Approx(0.6));  // 3 of 5 hold
  const std::string grade = YAML::LoadFile(out + "/trials/counted/0/grade.yaml")["reasons"].as<std::string>();
  INFO(grade);
  CHECK(grade.find("state_checks: PASS /env/fs/agent-visible/count.txt gte 40: matched") != std::string::npos);
  CHECK(grade.find("state_checks: FAIL /env/fs/agent-visible/count.txt lt 10: no matching file satisfies it (1 "
                   "checked); /env/fs/agent-visible/count.txt: got \"42\\n\"") != std::string::npos);
  CHECK(grade.find(R"(state_checks: PASS /env/fs/agent-visible/status.txt in ["shipped","delivered"])") !=
        std::string::npos);
  CHECK(grade.find(R"(state_checks: FAIL /env/fs/agent-visible/status.txt regex "^pend": )"
                   R"(no matching file satisfies it (1 checked); /env/fs/agent-visible/status.txt: got "shipped")") !=
        std::string::npos);
  CHECK(grade.find("state_checks: PASS /env/fs/agent-visible/draft.txt not_exists: no file matches") !=
        std::string::npos);
}

TEST_CASE("run: the same task enabling a tool no server provides is refused at preflight, naming the tool") {
  TempFiles t("forgectl-e2e-ops-");
  std::string task = write_task(t, "[write_file, frobnicate]"), out = t.file("run");
  auto r = forgectl_run({"run", task, "--agent", "oracle", "--executor", "local", "--out", out}, Millis(120000),
                        no_docker_env());
  INFO(r.text());
  CHECK(r.code == 2);
  CHECK(r.err.find("tool 'frobnicate' is not a forgectl built-in") != std::string::npos);
  CHECK(read(out + "/trials.jsonl").empty());
}
