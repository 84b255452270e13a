// A Harbor dataset as downloaded, with its dataset.toml: planned as one pack, its task list
// honoured, a missing task named, digests checked, a bad manifest named with its key.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/sha256.h"
#include "manifest/harbor/dataset_manifest.h"
#include "manifest/run_config.h"
#include "support/manifest_helpers.h"
#include "sweep/run_plan.h"
#include "sweep/task_set.h"
#include "trial/agent_choice.h"

using namespace forge;

namespace {

const std::vector<std::string> kNames = {"hello", "count-lines", "fix-json", "sort-csv", "grep-logs"};

void write_task(test::TempFiles& d, const std::string& name) {
  d.write(name + "/task.toml", "version = \"1.0\"\n[task]\nname = \"acme/" + name + "\"\n[verifier]\ntimeout_sec = 30\n");
  d.write(name + "/instruction.md", "Do " + name + ".\n");
  d.write(name + "/environment/Dockerfile", "FROM forgectl-test/harbor-base:1\nWORKDIR /app\n");
  d.write(name + "/tests/test.sh", "echo 1 > /logs/verifier/reward.txt\n");
  d.write(name + "/solution/solve.sh", "true\n");
}

std::string task_entries(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += "\n[[tasks]]\nname = \"acme/" + n + "\"\n";
  return out;
}

// A dataset of five tasks with the manifest Harbor writes beside them.
void write_dataset(test::TempFiles& d) {
  for (const auto& n : kNames) write_task(d, n);
  d.write("dataset.toml", "schema_version = \"1.0\"\n[dataset]\nname = \"acme/five\"\nversion = \"1.0.0\"\n"
                          "description = \"five tasks\"\nkeywords = [\"test\"]\n" +
                              task_entries(kNames));
}

sweep::PlanInput oracle_plan(const manifest::RunConfig& run, const std::string& dataset) {
  sweep::PlanInput in;
  in.task_paths = {dataset};
  in.agents = {trial::AgentChoice{trial::AgentChoice::Kind::kOracle}};
  in.run = &run;
  return in;
}

Result<std::string> any_image(const std::string& ref) { return std::string("sha256:") + sha256_hex(ref); }

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("dataset.toml: a dataset of 5 tasks plans as one pack; a task on disk the manifest does not name is not run") {
  test::TempFiles d("forgectl-dataset-");
  write_dataset(d);
  write_task(d, "extra");  // on disk, not in the manifest
  manifest::RunConfig run;
  auto plan = sweep::make_plan(oracle_plan(run, d.dir()), any_image);
  REQUIRE_MESSAGE(plan.has_value(), (plan ? "" : plan.error().what()));
  std::vector<std::string> ids;
  for (const auto& t : (*plan)->tasks) ids.push_back(t.task_id);
  CHECK(ids == std::vector<std::string>{"count-lines", "fix-json", "grep-logs", "hello", "sort-csv"});
  bool said = false;
  for (const auto& w : (*plan)->warnings)
    said = said || has(w.message, "1 task directory in '" + d.dir() + "' not named in its dataset.toml will not run");
  CHECK(said);

  // Without the manifest the same directory runs all six, as any directory of tasks does.
  std::filesystem::remove(d.file("dataset.toml"));
  auto all = sweep::make_plan(oracle_plan(run, d.dir()), any_image);
  REQUIRE(all.has_value());
  CHECK((*all)->tasks.size() == 6);
}

TEST_CASE("dataset.toml: a task it names that is missing from disk is named with the path looked for, before any trial") {
  test::TempFiles d("forgectl-dataset-");
  write_dataset(d);
  std::filesystem::remove_all(d.file("fix-json"));
  manifest::RunConfig run;
  auto plan = sweep::make_plan(oracle_plan(run, d.dir()), any_image);
  REQUIRE_FALSE(plan.has_value());
  CHECK(has(plan.error().message, "dataset.toml:"));
  CHECK(has(plan.error().message, "task 'acme/fix-json' is missing: no task directory at '" + d.dir() + "/fix-json'"));
  // The same through the task-set loader validate and run share: a run problem, not a task's.
  auto set = sweep::load_task_set({d.dir()}, "**/task.yaml", trial::PreflightInput{});
  CHECK_FALSE(set.ok());
  CHECK(has(set.report(), "acme/fix-json"));
}

TEST_CASE("dataset.toml: a digest that matches runs; one that does not is refused naming task, expected and actual") {
  test::TempFiles d("forgectl-dataset-");
  write_dataset(d);
  auto digest = manifest::harbor_task_digest(d.file("hello"));
  REQUIRE_MESSAGE(digest.has_value(), (digest ? "" : digest.error().what()));

  // The format: sorted "<path>\0<file sha256>\n" lines of the covered files, hashed again.
  std::string lines;
  for (const auto& [rel, text] : std::vector<std::pair<std::string, std::string>>{
           {"environment/Dockerfile", "FROM forgectl-test/harbor-base:1\nWORKDIR /app\n"},
           {"instruction.md", "Do hello.\n"},
           {"solution/solve.sh", "true\n"},
           {"task.toml", "version = \"1.0\"\n[task]\nname = \"acme/hello\"\n[verifier]\ntimeout_sec = 30\n"},
           {"tests/test.sh", "echo 1 > /logs/verifier/reward.txt\n"}})
    lines += rel + std::string(1, '\0') + sha256_hex(text) + "\n";
  CHECK(*digest == "sha256:" + sha256_hex(lines));
  // Files the format leaves out change nothing: bytecode, editor backups, files beside the task's.
  d.write("hello/tests/__pycache__/x.pyc", "bytecode");
  d.write("hello/tests/test.sh~", "backup");
  d.write("hello/notes.txt", "not covered");
  CHECK(*manifest::harbor_task_digest(d.file("hello")) == *digest);

  const std::string wrong = "sha256:" + std::string(64, 'a');
  d.write("dataset.toml", "[dataset]\nname = \"acme/five\"\n[[tasks]]\nname = \"acme/hello\"\ndigest = \"" + *digest +
                              "\"\n[[tasks]]\nname = \"acme/fix-json\"\ndigest = \"" + wrong + "\"\n");
  auto chosen = manifest::select_dataset_tasks(d.dir());
  REQUIRE_FALSE(chosen.has_value());
  const std::string& m = chosen.error().message;
  CHECK_MESSAGE(has(m, "dataset.toml:6: task 'acme/fix-json'"), m);
  CHECK(has(m, "expected " + wrong));
  CHECK(has(m, "found " + *manifest::harbor_task_digest(d.file("fix-json"))));

  // Right digests: both run; an edit to a covered file is caught.
  d.write("dataset.toml", "[dataset]\nname = \"acme/five\"\n[[tasks]]\nname = \"acme/hello\"\ndigest = \"" + *digest + "\"\n");
  auto ok = manifest::select_dataset_tasks(d.dir());
  REQUIRE_MESSAGE(ok.has_value(), (ok ? "" : ok.error().what()));
  CHECK(ok->task_dirs == std::vector<std::string>{d.dir() + "/hello"});
  CHECK(ok->unlisted == 4);
  d.write("hello/tests/test.sh", "echo 0 > /logs/verifier/reward.txt\n");
  CHECK_FALSE(manifest::select_dataset_tasks(d.dir()).has_value());
}

TEST_CASE("dataset.toml: a bad manifest is named with its line and key") {
  test::TempFiles d("forgectl-dataset-");
  for (const auto& n : kNames) write_task(d, n);
  struct Case {
    std::string toml, expect;
  };
  const std::vector<Case> cases = {
      {"[dataset\nname = 1\n", "dataset.toml:1"},
      {"[[tasks]]\nname = 7\n", "dataset.toml:2:8: [tasks[0]] 'name' must be a string"},
      {"[[tasks]]\nname = \"hello\"\n", "[tasks[0]] 'name' must be \"org/name\""},
      {"[[tasks]]\nname = \"acme/../etc\"\n", "must be \"org/name\""},
      {"[[tasks]]\nname = \"acme/hello\"\ndigest = \"md5:abc\"\n", "dataset.toml:3:10: [tasks[0]] 'digest' must be"},
      {"[[tasks]]\nname = \"acme/hello\"\n[[tasks]]\nname = \"other/hello\"\n",
       "dataset.toml:3:1: [tasks[1]] task 'other/hello' names the directory '" + d.dir() + "/hello' that task 'acme/hello'"},
      {"[[tasks]]\ndigest = \"sha256:" + std::string(64, 'a') + "\"\n", "[tasks[0]] needs a 'name'"},
      {"tasks = \"hello\"\n", "'tasks' must be an array"},
      {"[dataset]\nname = \"acme/x\"\n", "has no [[tasks]]"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.toml);
    d.write("dataset.toml", c.toml);
    auto m = manifest::read_dataset_manifest(d.dir());
    REQUIRE_FALSE(m.has_value());
    CHECK_MESSAGE(has(m.error().message, c.expect), m.error().message);
  }
  // More tasks than the bound: refused, not read.
  d.write("dataset.toml", task_entries(kNames));
  auto capped = manifest::read_dataset_manifest(d.dir(), 3);
  REQUIRE_FALSE(capped.has_value());
  CHECK(has(capped.error().message, "'tasks' has 5 items; at most 3 are read"));
}

TEST_CASE("dataset.toml: a task directory symlinked outside the dataset is refused") {
  test::TempFiles d("forgectl-dataset-");
  test::TempFiles outside("forgectl-outside-");
  write_task(outside, "hello");
  std::filesystem::create_directory_symlink(outside.file("hello"), d.file("hello"));
  d.write("dataset.toml", task_entries({"hello"}));
  auto chosen = manifest::select_dataset_tasks(d.dir());
  REQUIRE_FALSE(chosen.has_value());
  CHECK(has(chosen.error().message, "leads outside the dataset"));
}
