// Red team, the end of the agent phase: what the agent leaves behind must not stall or flood
// grading, nor turn its failure into an uncounted infra error. A sparse file declaring more than
// the workspace's disk limit (free on tmpfs, written dense by any copy) fails the trial as the
// agent's doing; background processes that hold json-db's connections are killed before the
// final state is read. Each beside an honest control.
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "core/files.h"
#include "engine/containers.h"
#include "manifest/task_parse.h"
#include "stack/labels.h"
#include "support/run_files.h"
#include "support/scripted_trial.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

void check_sparse_failure(const trial::TrialResult& r) {
  CAPTURE(reasons_of(r));
  CHECK(r.outcome == results::Outcome::kGraded);
  CHECK_FALSE(r.grade.binary_pass);
  CHECK(r.grade.score == 0);
  CHECK(r.error.find("sparse files count their whole length") != std::string::npos);
}

// orders-db with bash: the agent can reach json-db's port from its own processes.
manifest::TaskConfig orders_with_bash(const TempDir& dir) {
  copy_example_task("orders-db", dir.path());
  std::string yaml = read_text(dir.path() + "/task.yaml").value();
  auto at = yaml.find("enabled: [db_query, db_update]");
  REQUIRE(at != std::string::npos);
  yaml.replace(at, 30, "enabled: [db_query, db_update, bash]");
  dir.write("task.yaml", yaml);
  auto t = manifest::load_task(dir.path() + "/task.yaml");
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  return std::move(*t);
}

// 40 connections that never finish their headers, in sessions and environments of their own
// (setsid, env -i: out of the tool call's group and without its kill token).
const std::string kSlowloris =
    "i=0; while [ $i -lt 40 ]; do i=$((i+1)); setsid env -i /bin/sh -c '(printf \"GET /health HTTP/1.1\\r\\nHost: "
    "x\\r\\n\"; "
    "while :; do printf \"X-a: b\\r\\n\"; sleep 5; done) | nc json-db 8000' </dev/null >/dev/null 2>&1 & done; sleep 2";

}  // namespace

TEST_CASE("attacks (bomb): a sparse file past the workspace's disk limit fails the file checks as the agent's doing") {
  TempDir dir;
  auto task = answer_task(dir, "bomb_sparse", "environment:\n  stack: none\n  runner: {disk_mb: 16}\n");
  Rig rig;
  // Control: the right answer alone passes.
  auto honest = write_trajectory(dir, {{"Writing.", {{"bash", bash("echo 42 > answer.txt")}}}, {"Done.", {}}});
  auto ok = rig.run(task, replay(honest));
  REQUIRE_MESSAGE(ok.outcome == results::Outcome::kGraded, ok.error);
  CHECK(ok.grade.binary_pass);
  // The right answer beside a 64 GiB sparse file (no block of the 16 MiB tmpfs used): the stream
  // of its zeros would take minutes; it is refused at its header.
  auto bomb = write_trajectory(
      dir,
      {{"Writing.", {{"bash", bash("echo 42 > answer.txt && truncate -s 64G zeros && ls -ls zeros")}}}, {"Done.", {}}});
  auto r = rig.run(task, replay(bomb));
  check_sparse_failure(r);
  CHECK(rig.left_nothing());
}

TEST_CASE("attacks (bomb): a sparse file past the disk limit is never copied dense into the test grader") {
  TempDir dir;
  copy_example_task("script-tests", dir.path());
  // The reference solution, then a 3 GB sparse file: more than the default 2 GiB workspace.
  std::string solve = read_text(dir.path() + "/solution/solve.sh").value();
  dir.write("solution/solve.sh", solve + "\ntruncate -s 3000000000 /work/sp\n");
  auto task = manifest::load_task(dir.path() + "/task.yaml");
  REQUIRE_MESSAGE(task.has_value(), (task ? "" : task.error().what()));
  Rig rig;
  auto r = rig.run(*task, {trial::AgentChoice::Kind::kOracle});
  check_sparse_failure(r);
  CHECK(rig.left_nothing());
}

TEST_CASE("attacks (bomb): a workspace of more entries than a copy takes fails as the agent's doing") {
  TempDir dir;
  copy_example_task("script-tests", dir.path());
  // Empty files declare no bytes: each still costs the host an inode and the copy its time.
  std::string solve = read_text(dir.path() + "/solution/solve.sh").value();
  dir.write("solution/solve.sh", solve + "\nmkdir /work/many && cd /work/many && seq 1 200500 | xargs touch\n");
  auto task = manifest::load_task(dir.path() + "/task.yaml");
  REQUIRE_MESSAGE(task.has_value(), (task ? "" : task.error().what()));
  Rig rig;
  auto r = rig.run(*task, {trial::AgentChoice::Kind::kOracle});
  CAPTURE(reasons_of(r));
  CHECK(r.outcome == results::Outcome::kGraded);
  CHECK(r.grade.score == 0);
  CHECK(r.error.find("more than 200000 entries") != std::string::npos);
  CHECK(rig.left_nothing());
}

TEST_CASE("attacks (bomb): background processes holding json-db do not turn a failing agent into an infra error") {
  TempDir dir;
  auto task = orders_with_bash(dir);
  Rig rig;
  // The failing agent: it floods json-db's connections and never records the payment.
  auto idle = write_trajectory(dir, {{"Busy.", {{"bash", bash(kSlowloris)}}}, {"Order O-001 is paid.", {}}});
  auto bad = rig.run(task, replay(idle));
  CAPTURE(reasons_of(bad));
  CHECK(bad.outcome == results::Outcome::kGraded);
  CHECK_FALSE(bad.grade.binary_pass);
  CHECK(bad.grade.components.at("state_checks") < 0.5);
  // Control: the same flood after the right update still passes: the final state is read.
  auto good = write_trajectory(
      dir, {{"Updating.",
             {{"db_update", R"({"ops":[{"op":"replace","path":"$.orders[0].status","value":"paid"}]})"},
              {"bash", bash(kSlowloris)}}},
            {"Order O-001 is paid.", {}}});
  auto ok = rig.run(task, replay(good));
  CAPTURE(reasons_of(ok));
  CHECK(ok.outcome == results::Outcome::kGraded);
  CHECK(ok.grade.binary_pass);
  CHECK(rig.left_nothing());
}

TEST_CASE("attacks (bomb): a test script that would run for minutes does not hold a SIGINT") {
  TempDir dir;
  copy_example_task("script-tests", dir.path());
  // The agent's program is what the tests run; this one takes (almost) the whole test deadline.
  std::string solve = read_text(dir.path() + "/solution/solve.sh").value();
  dir.write("solution/solve.sh", solve + "\nprintf '#!/bin/sh\\nsleep 170\\n' > bin/csvsum\n");
  std::string yaml = read_text(dir.path() + "/grading.yaml").value();
  yaml.replace(yaml.find("timeout_seconds: 60"), 19, "timeout_seconds: 180");
  dir.write("grading.yaml", yaml);
  auto task = manifest::load_task(dir.path() + "/task.yaml");
  REQUIRE_MESSAGE(task.has_value(), (task ? "" : task.error().what()));
  Rig rig;
  std::atomic<int> interrupted{0};
  rig.env.interrupted = &interrupted;
  trial::TrialResult r;
  std::thread t([&] { r = rig.run(*task, {trial::AgentChoice::Kind::kOracle}); });
  // Once the grader's tests run, the run is interrupted (as main's signal thread counts a SIGINT).
  auto& c = *docker_env().client;
  bool grading = false;
  for (int i = 0; i < 1200 && !grading; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto cs = engine::list_containers(
        c, {{"label",
             {std::string(stack::kLabelRun) + "=" + rig.env.run_id, std::string(stack::kLabelRole) + "=grader"}}});
    grading = cs && !cs->empty() && cs->front().state == "running";
  }
  REQUIRE(grading);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  interrupted = 1;
  t.join();
  CAPTURE(reasons_of(r));
  // Interrupted: no outcome, left for --resume — not a timed-out test scored 0 minutes later.
  CHECK(r.interrupted);
  CHECK(rig.left_nothing());
}
