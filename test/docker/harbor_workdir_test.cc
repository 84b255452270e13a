// Harbor tasks against the real daemon: an image's WORKDIR is the agent's and the verifier's
// workspace, and a reward file the agent's program spoiled is the trial's 0, never an infra error.
#include <doctest/doctest.h>

#include <filesystem>

#include "agent/budget.h"
#include "core/strings.h"
#include "engine/images.h"
#include "manifest/harbor/harbor_load.h"
#include "stack/task_build.h"
#include "support/docker_env.h"
#include "support/harbor_rig.h"
#include "support/manifest_helpers.h"
#include "trial/trial.h"

using namespace forge;
using namespace forge::test;

namespace {

// A task with no workdir in task.toml, its Dockerfile's WORKDIR /app (the agent's, 1000).
std::string write_app_task(const TempFiles& d, const std::string& name, const std::string& base,
                           const std::string& test_sh, const std::string& solve_sh) {
  d.write(name + "/task.toml",
          "schema_version = \"1.1\"\n[task]\nname = \"test/" + name +
              "\"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n"
              "[environment]\nnetwork_mode = \"no-network\"\nmemory_mb = 512\n");
  d.write(name + "/instruction.md", "Do the task in /app.\n");
  d.write(name + "/environment/Dockerfile", "FROM " + base +
                                                "\nUSER 0:0\nWORKDIR /app\nRUN chown 1000:1000 /app\nUSER 1000:1000\n"
                                                "LABEL io.forgectl.test.task=" + name + "\n");
  d.write(name + "/tests/test.sh", test_sh);
  d.write(name + "/tests/expected.txt", "XYZZY\n");
  d.write(name + "/solution/solve.sh", solve_sh);
  return d.dir() + "/" + name;
}

bool has_reason(const trial::TrialResult& r, const std::string& text) {
  for (const auto& s : r.grade.reasons)
    if (s.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("harbor workdir: an image's WORKDIR /app is the agent's directory and what the verifier gets") {
  HarborRig rig("forgectl-test/harbor-wd-base", "w");
  TempFiles d("forgectl-harbor-wd-");
  auto task = rig.load(write_app_task(
      d, "appdir", rig.base,
      "if [ \"$(pwd)\" = /app ] && [ \"$(cat /app/out.txt 2>/dev/null)\" = hello ]; then echo 1 > "
      "/logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n",
      "echo hello > /app/out.txt\n"));

  auto oracle = rig.run(task, trial::AgentChoice::Kind::kOracle);
  CAPTURE(oracle.error);
  REQUIRE(oracle.outcome == results::Outcome::kGraded);
  CHECK(oracle.grade.score == 1.0);

  auto noop = rig.run(task, trial::AgentChoice::Kind::kNoop);
  CAPTURE(noop.error);
  REQUIRE(noop.outcome == results::Outcome::kGraded);
  CHECK(noop.grade.score == 0.0);

  // The agent starts in /app and is told so; a relative path lands there.
  auto rel =
      rig.run(task, trial::AgentChoice::Kind::kReplay, write_bash_replay(d, "rel.yaml", "pwd; echo hello > out.txt"));
  CAPTURE(rel.error);
  REQUIRE(rel.outcome == results::Outcome::kGraded);
  REQUIRE(rel.tool_log.size() == 1);
  CHECK(rel.tool_log[0].record.content.find("/app") == 0);
  CHECK(rel.grade.score == 1.0);

  // WORKDIR / is no workspace: the default /work stays.
  const std::string root_dir = write_app_task(d, "rootdir", rig.base, "echo 1 > /logs/verifier/reward.txt\n", "true\n");
  d.write("rootdir/environment/Dockerfile", "FROM " + rig.base + "\nWORKDIR /\nLABEL io.forgectl.test.task=rootdir\n");
  auto root_task = rig.load(root_dir);
  auto at_root = rig.replay_graded(root_task, write_bash_replay(d, "root.yaml", "pwd"), 1);
  CHECK(at_root.tool_log[0].record.content.find("/work") == 0);
}

TEST_CASE("harbor verifier: a reward.txt the agent's program made a directory scores 0, not an infra error") {
  HarborRig rig("forgectl-test/harbor-wd-base", "w");
  TempFiles d("forgectl-harbor-wd-");
  // As upstream tests are written: the agent's program run directly, with the verifier's rights.
  auto direct = rig.load(write_app_task(
      d, "direct", rig.base,
      "got=$(sh /app/answer.sh 2>&1)\nif [ \"$got\" = \"$(cat /tests/expected.txt)\" ]; then echo 1 > "
      "/logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n",
      "echo echo XYZZY > /app/answer.sh\n"));
  auto spoil = write_bash_replay(d, "spoil.yaml",
                                 "printf \"mkdir -p /logs/verifier/reward.txt\\necho wrong\\n\" > /app/answer.sh");
  auto r = rig.replay_graded(direct, spoil);  // the model's 0, not a retried grader error
  CHECK(r.grade.score == 0.0);
  CHECK_FALSE(r.grade.binary_pass);
  const std::string reasons = join(r.grade.reasons, " | ");
  CAPTURE(reasons);
  CHECK(has_reason(r, "reward.txt cannot be read"));

  auto honest = rig.run(direct, trial::AgentChoice::Kind::kOracle);  // the control
  CAPTURE(honest.error);
  REQUIRE(honest.outcome == results::Outcome::kGraded);
  CHECK(honest.grade.score == 1.0);

  // Run directly, the program reads /tests; through $FORGECTL_AS_AGENT it runs as 1000 and cannot.
  auto peek = write_bash_replay(d, "peek.yaml", "printf \"cat /tests/expected.txt\\n\" > /app/answer.sh");
  auto leaked = rig.replay_graded(direct, peek);
  CHECK(leaked.grade.score == 1.0);  // what docs/harbor.md warns of: the verifier cannot protect this

  auto guarded = rig.load(write_app_task(
      d, "guarded", rig.base,
      "[ -n \"$FORGECTL_AS_AGENT\" ] || exit 3\n"
      "got=$($FORGECTL_AS_AGENT sh /app/answer.sh 2>&1)\nif [ \"$got\" = \"$(cat /tests/expected.txt)\" ]; then "
      "echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n",
      "echo echo XYZZY > /app/answer.sh\n"));
  auto g = rig.replay_graded(guarded, peek);
  CHECK(g.grade.score == 0.0);
  auto gs = rig.replay_graded(guarded, spoil);
  CHECK(gs.grade.score == 0.0);
  const std::string greasons = join(gs.grade.reasons, " | ");
  CAPTURE(greasons);
  CHECK(has_reason(gs, "reward.txt: 0"));  // as 1000 the program could not touch /logs/verifier
  auto go = rig.run(guarded, trial::AgentChoice::Kind::kOracle);
  CAPTURE(go.error);
  REQUIRE(go.outcome == results::Outcome::kGraded);
  CHECK(go.grade.score == 1.0);
}
