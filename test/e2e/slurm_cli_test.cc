// `--shard auto` and `forgectl slurm submit --dry-run` through the real binary with neither Slurm
// nor Docker: a shard found from Slurm's array variables writes DIR/shards/<i>-of-<N> and starts
// with --resume; merge names the shard that is missing; outside an array, a clear error.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "results/run_json.h"
#include "results/trial_record.h"
#include "support/manifest_helpers.h"
#include "support/process.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

// A local-executor task whose oracle writes one file: no engine needed.
std::string write_task(const TempFiles& t) {
  t.write("tasks/echo/solution/solve.sh", "echo done > out.txt\n");
  t.write("tasks/echo/grading.yaml",
          "state_checks:\n  jsonpaths:\n    - {path_glob: \"/env/fs/agent-visible/out.txt\", contains: \"done\"}\n");
  t.write("tasks/echo/task.yaml", R"(task_id: echo_local
name: "Echo"
category: local
description: "Write out.txt."
initial_user_message: "Write out.txt."
tools:
  agent: {enabled: [bash]}
user_simulator:
  mode: scripted
  scripted_flow:
    - {default: "###STOP###"}
grading: grading.yaml
solution:
  script: solution/solve.sh
)");
  return t.file("tasks/echo");
}

std::map<std::string, std::string> array_task(int id, int count) {
  return {{"DOCKER_HOST", "unix:///nonexistent/forgectl-e2e/docker.sock"},
          {"SLURM_ARRAY_TASK_ID", std::to_string(id)},
          {"SLURM_ARRAY_TASK_COUNT", std::to_string(count)},
          {"SLURM_ARRAY_TASK_MIN", "0"},
          {"SLURM_ARRAY_TASK_MAX", std::to_string(count - 1)}};
}

RunResult run(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}) {
  auto r = run_forgectl(args, Millis(120000), env);
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  return *r;
}

}  // namespace

TEST_CASE("run --shard auto: each array task writes its own shard directory, starts with --resume, merges whole") {
  TempFiles t("forgectl-e2e-shard-auto-");
  std::string task = write_task(t), out = t.file("sweep");
  auto shard_run = [&](int i) {
    return run({"run", task, "--agent", "oracle", "--trials", "4", "--executor", "local", "--out", out, "--shard",
                "auto", "--resume", "--progress", "plain"},
               array_task(i, 2));
  };
  auto one = shard_run(1);
  REQUIRE_MESSAGE(one.code == 0, one.text());
  std::string dir1 = out + "/shards/1-of-2";
  auto run1 = results::RunJson::read(dir1 + "/run.json");
  REQUIRE(run1.has_value());
  CHECK(run1->shard == "1/2");
  CHECK(run1->invocation.shard == "1/2");  // `forgectl run --resume --out DIR/shards/1-of-2` alone continues it

  // Shard 0 has not run: merge names it rather than making a smaller run.
  auto early = run({"merge", "--out", out + "/merged", dir1, out + "/shards/0-of-2"});
  CHECK(early.code == 1);
  CHECK(early.err.find(out + "/shards/0-of-2: does not exist") != std::string::npos);
  CHECK(early.err.find("shard 0/2: none of the run directories given holds it") != std::string::npos);
  CHECK_FALSE(fs::exists(out + "/merged/trials.jsonl"));

  auto zero = shard_run(0);
  REQUIRE_MESSAGE(zero.code == 0, zero.text());
  auto again = shard_run(1);  // a requeued task: everything of its shard is finished already
  REQUIRE_MESSAGE(again.code == 0, again.text());
  CHECK(again.out.find("0 run now") != std::string::npos);

  auto merged = run({"merge", "--out", out + "/merged", dir1, out + "/shards/0-of-2"});
  REQUIRE_MESSAGE(merged.code == 0, merged.text());
  auto log = results::read_trials_jsonl(out + "/merged/trials.jsonl");
  REQUIRE(log.has_value());
  CHECK(log->trials.size() == 4);
}

TEST_CASE("run --shard auto: outside an array job, or in one with gaps, a clear error and nothing written") {
  TempFiles t("forgectl-e2e-shard-auto-err-");
  std::string task = write_task(t), out = t.file("sweep");
  auto outside = run({"run", task, "--agent", "oracle", "--executor", "local", "--out", out, "--shard", "auto"});
  CHECK(outside.code == 2);
  CHECK(outside.err.find("--shard auto: not in a Slurm array job (SLURM_ARRAY_TASK_ID is not set)") !=
        std::string::npos);
  auto env = array_task(2, 2);
  env["SLURM_ARRAY_TASK_MAX"] = "2";  // --array=0,2
  auto gaps = run({"run", task, "--agent", "oracle", "--executor", "local", "--out", out, "--shard", "auto"}, env);
  CHECK(gaps.code == 2);
  CHECK(gaps.err.find("the array's indexes are not contiguous") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("slurm submit --dry-run: the scripts and sbatch commands, nothing submitted or written") {
  TempFiles t("forgectl-e2e-slurm-dry-");
  std::string task = write_task(t), out = t.file("sweep");
  auto r = run({"slurm", "submit", task, "--agent", "oracle", "--trials", "2", "--shards", "3", "--out", out,
                "--dry-run", "--", "--partition=eval", "--time=1:00:00"});
  REQUIRE_MESSAGE(r.code == 0, r.text());
  CHECK(r.out.find("#SBATCH --array=0-2\n") != std::string::npos);
  CHECK(r.out.find("'run' '" + task + "' '--agent' 'oracle' '--trials' '2' '--out' '" + out +
                   "' '--shard' 'auto' '--resume' '--build-images'") != std::string::npos);
  CHECK(r.out.find("'merge' '--out' '" + out + "/merged' '" + out + "/shards/0-of-3'") != std::string::npos);
  CHECK(r.out.find("sbatch --parsable '--partition=eval' '--time=1:00:00' " + out + "/slurm/shard.sbatch") !=
        std::string::npos);
  CHECK(r.out.find("sbatch --parsable --dependency=afterany:ARRAY_JOB_ID '--partition=eval'") != std::string::npos);
  CHECK_FALSE(fs::exists(out));

  auto own = run(
      {"slurm", "submit", task, "--agent", "oracle", "--shards", "2", "--out", out, "--dry-run", "--", "--array=0-9"});
  CHECK(own.code == 2);
  CHECK(own.err.find("sbatch argument '--array=0-9'") != std::string::npos);
  auto broken = run({"slurm", "submit", t.file("tasks/nope"), "--agent", "oracle", "--shards", "2", "--out", out});
  CHECK(broken.code == 2);
  CHECK(broken.err.find("nothing was submitted") != std::string::npos);
  auto status = run({"slurm", "status", out});
  CHECK(status.code == 1);
  CHECK(status.err.find("was not submitted with forgectl slurm submit") != std::string::npos);
}
