// A separate verifier's own settings ([verifier.environment]) against the real daemon: its env
// reaches the tests and never the agent, its cpus and memory_mb are the verifier container's
// cgroup limits, and a verifier the OOM killer ends scores 0 naming the limit.
#include <doctest/doctest.h>

#include <string>

#include "engine/containers.h"
#include "engine/networks.h"
#include "engine/tar.h"
#include "manifest/harbor/harbor_load.h"
#include "support/docker_env.h"
#include "support/harbor_rig.h"
#include "support/manifest_helpers.h"
#include "trial/trial.h"

using namespace forge;
using namespace forge::test;

namespace {

// A task whose answer.txt must hold 42; `verifier_env` is the body of its [verifier.environment].
std::string write_task(const TempFiles& d, const std::string& name, const std::string& base,
                       const std::string& verifier_env, const std::string& test_sh) {
  d.write(name + "/task.toml",
          "version = \"1.0\"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n"
          "[verifier.environment]\nnetwork_mode = \"no-network\"\n" + verifier_env +
              "[environment]\nnetwork_mode = \"no-network\"\nmemory_mb = 512\n"
              "env = { FROM_ENV = \"agent-side\" }\n");
  d.write(name + "/instruction.md", "Write 42 to answer.txt.\n");
  write_harbor_dockerfile(d, name, base);
  d.write(name + "/tests/test.sh", test_sh);
  d.write(name + "/solution/solve.sh", "echo 42 > answer.txt\n");
  return d.dir() + "/" + name;
}

manifest::TaskConfig load(HarborRig& rig, const std::string& dir) { return rig.load(dir); }

// reward 1 only when the answer is right, the [verifier.environment].env value is there and the
// cgroup's memory limit (memory.max) is 256 MiB; the parts as keys of their own.
const char* kProbe =
    "yes=0; grep -q 42 answer.txt 2>/dev/null && yes=1\n"
    "secret=0; [ \"$VER_SECRET\" = \"ve-4f1c\" ] && secret=1\n"
    // cgroup v2's files, else v1's (this host's daemon may run either).
    "if [ -e /sys/fs/cgroup/memory.max ]; then m=$(cat /sys/fs/cgroup/memory.max); c=$(cat /sys/fs/cgroup/cpu.max)\n"
    "else m=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes)\n"
    "  c=\"$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)\"; fi\n"
    "mem=0; [ \"$m\" = 268435456 ] && mem=1\n"
    "cpu=0; [ \"$c\" = \"100000 100000\" ] && cpu=1\n"
    "noenv=0; [ -z \"${FROM_ENV+set}\" ] && noenv=1\n"
    "over=0; [ \"$BOTH\" = verifier ] && over=1\n"
    "r=0; [ $yes$secret$mem = 111 ] && r=1\n"
    "printf '{\"reward\": %s, \"secret\": %s, \"memory\": %s, \"cpus\": %s, \"no_environment_env\": %s, "
    "\"verifier_env_wins\": %s}' $r $secret $mem $cpu $noenv $over > /logs/verifier/reward.json\n";

}  // namespace

TEST_CASE("harbor [verifier.environment]: its env reaches the tests, never the agent; cpus and memory_mb are the limits") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-verenv-");
  const std::string limits = "cpus = 1\nmemory_mb = 256\n";
  auto task = load(rig, write_task(d, "verenv", rig.base,
                                   limits + "env = { VER_SECRET = \"ve-4f1c\", BOTH = \"venv\" }\n", kProbe));
  d.write("verenv/task.toml",
          "version = \"1.0\"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\nenv = { BOTH = \"verifier\" }\n"
          "[verifier.environment]\nnetwork_mode = \"no-network\"\n" + limits +
              "env = { VER_SECRET = \"ve-4f1c\", BOTH = \"venv\" }\n"
              "[environment]\nnetwork_mode = \"no-network\"\nmemory_mb = 512\nenv = { FROM_ENV = \"agent-side\" }\n");
  task = load(rig, d.dir() + "/verenv");

  auto oracle = rig.run(task, trial::AgentChoice::Kind::kOracle);
  CAPTURE(oracle.error);
  CAPTURE(oracle.verifier_output);
  REQUIRE(oracle.outcome == results::Outcome::kGraded);
  CHECK(oracle.grade.components.at("reward.secret") == 1.0);
  CHECK(oracle.grade.components.at("reward.memory") == 1.0);  // memory.max = memory_mb exactly
  CHECK(oracle.grade.components.at("reward.cpus") == 1.0);    // cpu.max = one CPU
  CHECK(oracle.grade.components.at("reward.no_environment_env") == 1.0);  // Harbor: the table replaces [environment]'s
  CHECK(oracle.grade.components.at("reward.verifier_env_wins") == 1.0);
  CHECK(oracle.grade.score == 1.0);
  CHECK(oracle.grade.binary_pass);

  // The agent prints its whole environment: [environment].env is there, the verifier's value is not.
  auto agent = rig.run(task, trial::AgentChoice::Kind::kReplay,
                       write_bash_replay(d, "replay.yaml", "env; echo 42 > answer.txt"));
  CAPTURE(agent.error);
  REQUIRE(agent.outcome == results::Outcome::kGraded);
  REQUIRE(agent.tool_log.size() == 1);
  const std::string& out = agent.tool_log[0].record.content;
  CAPTURE(out);
  CHECK(out.find("FROM_ENV=agent-side") != std::string::npos);
  CHECK(out.find("ve-4f1c") == std::string::npos);
  CHECK(out.find("VER_SECRET") == std::string::npos);
  for (const auto& m : agent.episode.messages) CHECK(m.content.find("ve-4f1c") == std::string::npos);
  CHECK(agent.grade.score == 1.0);

  // The control: the same tests without the value in [verifier.environment].env score 0.
  auto control = load(rig, write_task(d, "verenv-none", rig.base, limits, kProbe));
  auto c = rig.run(control, trial::AgentChoice::Kind::kOracle);
  CAPTURE(c.error);
  REQUIRE(c.outcome == results::Outcome::kGraded);
  CHECK(c.grade.components.at("reward.secret") == 0.0);
  CHECK(c.grade.components.at("reward.memory") == 1.0);
  CHECK(c.grade.score == 0.0);
  CHECK(rig.left_nothing());
}

TEST_CASE("harbor [verifier.environment]: a verifier the OOM killer ends scores 0 naming memory_mb; one that survives is scored") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-veroom-");
  // bash holds the whole substitution in memory: far past 64 MiB.
  auto oom = load(rig, write_task(d, "veroom", rig.base, "memory_mb = 64\n",
                                  "x=$(head -c 400000000 /dev/zero | tr '\\0' a)\necho 1 > /logs/verifier/reward.txt\n"));
  auto r = rig.run(oom, trial::AgentChoice::Kind::kOracle);
  CAPTURE(r.error);
  CAPTURE(r.verifier_output);
  REQUIRE(r.outcome == results::Outcome::kGraded);  // the trial's 0, not an infra error to retry
  CHECK(r.grade.score == 0.0);
  REQUIRE_FALSE(r.grade.reasons.empty());
  CAPTURE(r.grade.reasons.back());
  CHECK(r.grade.reasons.back().find("the verifier ran out of memory ([verifier.environment] memory_mb = 64 MiB)") !=
        std::string::npos);

  // A subshell the killer ends while the tests go on: their reward counts, the kill is noted.
  auto survive = load(rig, write_task(d, "veroom-survive", rig.base, "memory_mb = 64\n",
                                      "( x=$(head -c 400000000 /dev/zero | tr '\\0' a) )\n"
                                      "echo 1 > /logs/verifier/reward.txt\n"));
  auto s = rig.run(survive, trial::AgentChoice::Kind::kOracle);
  CAPTURE(s.error);
  CAPTURE(s.verifier_output);
  REQUIRE(s.outcome == results::Outcome::kGraded);
  CHECK(s.grade.score == 1.0);
  std::string reasons;
  for (const auto& why : s.grade.reasons) reasons += why + "\n";
  CAPTURE(reasons);
  CHECK(reasons.find("the out-of-memory killer ended a process of the verifier") != std::string::npos);
  CHECK(rig.left_nothing());
}

TEST_CASE("harbor shared verifier, multi-step: each step's tests run in the runner and are gone before the next agent") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-shsteps-");
  const std::string name = "shared-steps";
  d.write(name + "/task.toml",
          "schema_version = \"1.3\"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n"
          "[environment]\nnetwork_mode = \"no-network\"\nmemory_mb = 512\n"
          "[[steps]]\nname = \"one\"\n[[steps]]\nname = \"two\"\n");
  write_harbor_dockerfile(d, name, rig.base);
  d.write(name + "/tests/test.sh", "echo 0 > /logs/verifier/reward.txt\n");
  d.write(name + "/steps/one/instruction.md", "Write 'one' to step1.txt.\n");
  // Step one's tests leave a file in /tests and one in /logs/verifier besides their reward.
  d.write(name + "/steps/one/tests/test.sh",
          "echo left > /tests/step1-left; echo left > /logs/verifier/step1-left\n"
          "if [ \"$(cat step1.txt)\" = one ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n");
  d.write(name + "/steps/two/instruction.md", "Write 'two' to step2.txt.\n");
  d.write(name + "/steps/two/tests/test.sh",
          "clean=1; [ -e /tests/step1-left ] && clean=0; [ -e /logs/verifier/step1-left ] && clean=0\n"
          "[ -e /logs/verifier/reward.txt ] && clean=0\n"
          "shared=0; [ -e /tmp/agent-left ] && shared=1\n"
          "ok=0; [ \"$(cat step2.txt)\" = two ] && [ $clean = 1 ] && ok=1\n"
          "printf '{\"reward\": %s, \"clean\": %s, \"shared\": %s}' $ok $clean $shared > /logs/verifier/reward.json\n");
  auto task = rig.load(d.dir() + "/" + name);
  // At each step the agent solves both, looks for any test or reward left, and tries to plant one.
  const std::string replay = write_bash_replay(
      d, "replay.yaml",
      "echo one > step1.txt; echo two > step2.txt; echo x > /tmp/agent-left; "
      "[ -e /tests ] && echo tests-present; [ -e /logs/verifier ] && echo verifier-present; "
      "mkdir /logs/verifier 2>/dev/null && echo planted-logs; mkdir /tests 2>/dev/null && echo planted-tests; "
      "ls -a /logs; echo probed");
  rig.cfg.harbor_shared_verifier = true;
  auto r = rig.replay_graded(task, replay);
  CAPTURE(r.verifier_output);
  for (const auto& why : r.grade.reasons) CAPTURE(why);
  CHECK(r.grade.components.at("step.one") == 1.0);
  CHECK(r.grade.components.at("step.two") == 1.0);
  CHECK(r.grade.score == 1.0);
  REQUIRE(r.tool_log.size() == 2);
  for (const auto& call : r.tool_log) {
    const std::string& out = call.record.content;
    CAPTURE(out);
    CHECK(out.find("probed") != std::string::npos);
    CHECK(out.find("tests-present") == std::string::npos);
    CHECK(out.find("verifier-present") == std::string::npos);
    CHECK(out.find("planted") == std::string::npos);
  }
  // Step two's verifier ran in the agent's runner (its /tmp), with nothing of step one's left.
  const std::string two = log_files(r)["steps/two/verifier/reward.json"];
  CAPTURE(two);
  CHECK(two.find("\"clean\": 1, \"shared\": 1") != std::string::npos);
  CHECK(rig.left_nothing());
}
