// A multi-step Harbor task's per-step parts against the real daemon: a step's workdir/ and
// setup.sh reach the workspace only at that step, a later step's failing setup.sh or healthcheck
// scores 0 (the agent had the runner before it), per-step artifacts land under logs/steps/<name>/artifacts/, and "mean"
// averages each reward key across the steps.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/strings.h"
#include "engine/containers.h"
#include "engine/exec.h"
#include "engine/networks.h"
#include "engine/tar.h"
#include "results/run_dir.h"
#include "support/containers.h"
#include "support/docker_env.h"
#include "support/harbor_rig.h"
#include "support/manifest_helpers.h"
#include "trial/harbor_steps.h"
#include "trial/trial.h"
#include "trial/trial_files.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

// Two steps: "one" asks for step1.txt; "two" for step2.txt, and its workdir/ brings a data file
// (a name to search for), a subdirectory with a script, and a setup.sh that writes made.txt from
// it, as whoever runs it. Step two's tests check all of that; its healthcheck needs made.txt.
// `two_extra` goes into step two's table (after its healthcheck); `setup_sh` replaces setup.sh.
std::string write_task(const TempFiles& d, const std::string& name, const std::string& base,
                       const std::string& two_extra = "", const std::string& setup_sh = "") {
  d.write(name + "/task.toml",
          "schema_version = \"1.4\"\n[task]\nname = \"forgectl-test/" + name +
              "\"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n"
              "[environment]\nnetwork_mode = \"no-network\"\nmemory_mb = 512\n"
              "[[steps]]\nname = \"one\"\n[[steps]]\nname = \"two\"\n"
              "[steps.healthcheck]\ncommand = \"test -f made.txt\"\ninterval_sec = 0.1\nretries = 2\n" +
              two_extra);
  write_harbor_dockerfile(d, name, base);
  d.write(name + "/tests/test.sh", "echo 0 > /logs/verifier/reward.txt\n");
  d.write(name + "/steps/one/instruction.md", "Write 'one' to step1.txt.\n");
  d.write(name + "/steps/one/tests/test.sh",
          "if [ \"$(cat step1.txt 2>/dev/null)\" = one ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n");
  d.write(name + "/steps/one/solution/solve.sh", "echo one > step1.txt\n");
  d.write(name + "/steps/two/instruction.md", "Write 'two' to step2.txt.\n");
  d.write(name + "/steps/two/workdir/stepwd-marker-two.txt", "given-by-workdir\n");
  d.write(name + "/steps/two/workdir/bin/shout.sh", "echo made-by-setup\n");
  d.write(name + "/steps/two/workdir/setup.sh",
          setup_sh.empty() ? "sh bin/shout.sh > made.txt && id -u >> made.txt\n" : setup_sh);
  d.write(name + "/steps/two/tests/test.sh",
          "ok=1\n"
          "[ \"$(cat stepwd-marker-two.txt)\" = given-by-workdir ] || ok=0\n"
          "[ \"$(cat made.txt)\" = \"$(printf 'made-by-setup\\n1000')\" ] || ok=0\n"  // by setup.sh, as the agent
          "[ -e setup.sh ] && ok=0\n"                                                  // run, not given
          "[ \"$(cat step2.txt 2>/dev/null)\" = two ] || ok=0\n"
          "echo $ok > /logs/verifier/reward.txt\n");
  d.write(name + "/steps/two/solution/solve.sh", "echo two > step2.txt\n");
  return d.dir() + "/" + name;
}

}  // namespace

TEST_CASE("harbor steps workdir: a step's workdir/ and setup.sh come before its agent; the oracle passes, noop fails") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-stepwd-");
  auto task = rig.load(write_task(d, "stepwd", rig.base));

  auto o = rig.run(task, trial::AgentChoice::Kind::kOracle);
  CAPTURE(o.error);
  CAPTURE(o.verifier_output);
  CAPTURE(reasons_of(o));
  REQUIRE(o.outcome == results::Outcome::kGraded);
  CHECK(o.grade.components.at("step.one") == 1.0);
  CHECK(o.grade.components.at("step.two") == 1.0);  // workdir files, setup.sh's made.txt as 1000, no setup.sh
  CHECK(o.grade.score == 1.0);
  CHECK(o.grade.binary_pass);

  auto n = rig.run(task, trial::AgentChoice::Kind::kNoop);
  CAPTURE(n.error);
  REQUIRE(n.outcome == results::Outcome::kGraded);
  CHECK(n.grade.components.at("step.one") == 0.0);
  CHECK(n.grade.components.at("step.two") == 0.0);
  CHECK(n.grade.score == 0.0);
  CHECK_FALSE(n.grade.binary_pass);
  CHECK(rig.left_nothing());
}

TEST_CASE("harbor steps workdir: during step one's agent, step two's workdir files and setup.sh are nowhere") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-stepwd-");
  auto task = rig.load(write_task(d, "stepwd-probe", rig.base));
  // The same call at each step: every file named like step two's, and every file holding its
  // setup.sh's or its data file's text, anywhere but /proc and /sys.
  const std::string replay = write_bash_replay(
      d, "probe.yaml",
      "echo one > step1.txt; find / \\( -path /proc -o -path /sys \\) -prune -o \\( -name \"stepwd-marker*\" -o -name "
      "shout.sh -o -name made.txt \\) -print 2>/dev/null; grep -rlE \"given-by-workdir|bin/shout\" / "
      "--exclude-dir=proc "
      "--exclude-dir=sys --exclude-dir=dev 2>/dev/null; echo probed");
  auto r = rig.replay_graded(task, replay, 2);
  const std::string& one = r.tool_log[0].record.content;
  const std::string& two = r.tool_log[1].record.content;
  CAPTURE(one);
  CAPTURE(two);
  CHECK(one.find("probed") != std::string::npos);
  CHECK(one.find("stepwd-marker") == std::string::npos);
  CHECK(one.find("shout.sh") == std::string::npos);
  CHECK(one.find("made.txt") == std::string::npos);
  CHECK(one.find("/work/") == std::string::npos);  // no file of the workspace holds the text either
  // The probe does find them once they are the agent's: step two's phase.
  CHECK(two.find("/work/stepwd-marker-two.txt") != std::string::npos);
  CHECK(two.find("/work/bin/shout.sh") != std::string::npos);
  CHECK(two.find("/work/made.txt") != std::string::npos);
  CHECK(two.find("setup.sh") == std::string::npos);  // the script itself is never left behind
  CHECK(two.find("/tmp/") == std::string::npos);      // nor its temporary copy
  CHECK(r.grade.components.at("step.one") == 1.0);
  CHECK(rig.left_nothing());
}

TEST_CASE("harbor steps workdir: a link or a directory the agent left where step two's workdir puts something is replaced") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-stepwd-");
  auto task = rig.load(write_task(d, "stepwd-link", rig.base));
  // Step one's agent puts bin -> /etc where step two's workdir has bin/shout.sh, and a directory
  // where it has a file; step two's agent looks where the copy went.
  const std::string replay = write_bash_replay(
      d, "link.yaml",
      "echo one > step1.txt; [ -e made.txt ] || { ln -s /etc bin; mkdir stepwd-marker-two.txt; }; ls -ld bin; "
      "ls /etc/shout.sh 2>&1; cat stepwd-marker-two.txt 2>&1; echo probed");
  auto r = rig.replay_graded(task, replay, 2);
  const std::string& one = r.tool_log[0].record.content;
  const std::string& two = r.tool_log[1].record.content;
  CAPTURE(one);
  CAPTURE(two);
  CHECK(one.find("bin -> /etc") != std::string::npos);  // the link was made
  CHECK(two.find("probed") != std::string::npos);
  CHECK(two.find("bin -> /etc") == std::string::npos);  // replaced by the workdir's directory
  CHECK(two.rfind("drwx", 0) == 0);
  CHECK(two.find("No such file") != std::string::npos);  // nothing was written through it
  CHECK(two.find("given-by-workdir") != std::string::npos);  // the directory gave way to the file
  CHECK(rig.left_nothing());
}

// After step one the agent has had the runner, so step two's failing setup.sh or healthcheck may
// be its doing: graded, that step and the rest 0, never an infra error an agent could dodge with.
TEST_CASE("harbor steps setup: a later step's failing setup.sh or healthcheck scores 0, never infra") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-stepwd-");
  auto broken = rig.load(write_task(d, "stepwd-broken", rig.base, "", "echo broken-setup; exit 7\n"));
  auto b = rig.run(broken, trial::AgentChoice::Kind::kOracle);
  CAPTURE(b.error);
  REQUIRE(b.outcome == results::Outcome::kGraded);
  CHECK(b.grade.components.at("step.one") == doctest::Approx(1.0));
  CHECK(b.grade.components.at("step.two") == doctest::Approx(0.0));
  CHECK(b.grade.score == doctest::Approx(0.5));  // the mean over both steps, step two's 0 counted
  CHECK(join(b.grade.reasons, " | ").find("step two: step 'two': steps/two/workdir/setup.sh failed (exit code 7)") !=
        std::string::npos);
  CHECK(join(b.grade.reasons, " | ").find("after the agent had the environment for 1 step(s)") != std::string::npos);
  CHECK(b.tool_log.size() == 1);  // step one's solve.sh only: step two's agent never started

  // setup.sh succeeds but leaves nothing the step's healthcheck wants.
  auto unhealthy = rig.load(write_task(d, "stepwd-unhealthy", rig.base, "", "true\n"));
  auto u = rig.run(unhealthy, trial::AgentChoice::Kind::kOracle);
  CAPTURE(u.error);
  REQUIRE(u.outcome == results::Outcome::kGraded);
  CHECK(u.grade.components.at("step.two") == doctest::Approx(0.0));
  CHECK(join(u.grade.reasons, " | ").find("step 'two': [steps.healthcheck]") != std::string::npos);
  CHECK(u.tool_log.size() == 1);
  CHECK(rig.left_nothing());
}

// The cheat: step one's agent plants made.txt as a directory, so step two's setup.sh cannot write
// it. Before, that made the trial an infra error — retried, then left out of every rate — for an
// agent that would have failed step two anyway. The honest control is the oracle test above.
TEST_CASE("harbor steps setup: an agent that breaks the next step's setup.sh gets 0 for it, not an uncounted trial") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-stepwd-");
  auto task = rig.load(write_task(d, "stepwd-sabotage", rig.base));
  const std::string replay =
      write_bash_replay(d, "sabotage.yaml", "echo one > step1.txt; mkdir -p made.txt/x; echo planted");
  auto r = rig.replay_graded(task, replay);
  CHECK(r.infra_kind == results::InfraKind::kNone);
  CHECK(r.grade.components.at("step.one") == doctest::Approx(1.0));
  CHECK(r.grade.components.at("step.two") == doctest::Approx(0.0));
  CHECK(r.grade.score == doctest::Approx(0.5));
  CHECK_FALSE(r.grade.binary_pass);
  CHECK(join(r.grade.reasons, " | ").find("steps/two/workdir/setup.sh failed") != std::string::npos);
  CHECK(rig.left_nothing());
}

TEST_CASE("harbor steps user: a step's own [steps.agent].user runs its agent, its setup.sh and its /solution") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-stepuser-");
  const std::string name = "stepuser";
  d.write(name + "/task.toml",
          "schema_version = \"1.4\"\n[task]\nname = \"forgectl-test/" + name +
              "\"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n"
              "[environment]\nnetwork_mode = \"no-network\"\nmemory_mb = 512\n"
              "[[steps]]\nname = \"one\"\n[[steps]]\nname = \"two\"\n[steps.agent]\nuser = \"1001:1001\"\n");
  // A workspace both users may write (the tmpfs takes the image directory's mode).
  d.write(name + "/environment/Dockerfile", "FROM " + rig.base +
                                                "\nUSER 0:0\nRUN mkdir -p /work && chmod 1777 /work\nWORKDIR /work\n"
                                                "USER 1000:1000\nLABEL io.forgectl.test.task=" + name + "\n");
  d.write(name + "/tests/test.sh", "echo 0 > /logs/verifier/reward.txt\n");
  d.write(name + "/steps/one/instruction.md", "Write your uid to one.txt.\n");
  d.write(name + "/steps/one/tests/test.sh",
          "if [ \"$(cat one.txt)\" = 1000 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n");
  d.write(name + "/steps/one/solution/solve.sh", "id -u > one.txt\n");
  d.write(name + "/steps/two/instruction.md", "Write your uid to two.txt.\n");
  d.write(name + "/steps/two/workdir/setup.sh", "id -u > setup-uid.txt\n");
  d.write(name + "/steps/two/tests/test.sh",
          "if [ \"$(cat two.txt)\" = 1001 ] && [ \"$(cat setup-uid.txt)\" = 1001 ] && [ \"$(cat one.txt)\" = 1000 ]; "
          "then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n");
  // The oracle's /solution is the step user's, and so is /logs/agent.
  d.write(name + "/steps/two/solution/solve.sh", "id -u > two.txt && id -u > /logs/agent/two-uid.txt\n");
  auto task = rig.load(d.dir() + "/" + name);

  auto r = rig.run(task, trial::AgentChoice::Kind::kOracle);
  CAPTURE(r.error);
  CAPTURE(r.verifier_output);
  CAPTURE(reasons_of(r));
  REQUIRE(r.outcome == results::Outcome::kGraded);
  CHECK(r.grade.components.at("step.one") == 1.0);
  CHECK(r.grade.components.at("step.two") == 1.0);
  CHECK(r.grade.score == 1.0);
  CHECK(log_files(r)["steps/two/agent/two-uid.txt"] == "1001\n");
  CHECK(rig.left_nothing());
}

TEST_CASE("harbor steps: per-step artifacts under logs/steps/<name>/artifacts/; mean averages each reward key") {
  HarborRig rig;
  TempFiles d("forgectl-harbor-stepart-");
  const std::string name = "stepart";
  d.write(name + "/task.toml",
          "schema_version = \"1.4\"\nmulti_step_reward_strategy = \"mean\"\n[task]\nname = \"forgectl-test/" + name +
              "\"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n"
              "[environment]\nnetwork_mode = \"no-network\"\nmemory_mb = 512\n"
              "[[steps]]\nname = \"one\"\nartifacts = [\"/outdir\"]\n"
              "[[steps]]\nname = \"two\"\nartifacts = [{ source = \"notes.txt\", destination = \"two-notes.txt\" }]\n");
  d.write(name + "/environment/Dockerfile", "FROM " + rig.base +
                                                "\nUSER 0:0\nRUN mkdir /outdir && chown 1000:1000 /outdir\nWORKDIR /work\n"
                                                "USER 1000:1000\nLABEL io.forgectl.test.task=" + name + "\n");
  // Step one: reward 1, quality 0.5; step two: quality 1 and no reward key (its own score is 1,
  // its only key). Per key: reward (1 + 0) / 2 = 0.5, quality 0.75; the mean of the scores would be 1.
  d.write(name + "/tests/test.sh", "echo 0 > /logs/verifier/reward.txt\n");
  d.write(name + "/steps/one/instruction.md", "Write /outdir/result.txt.\n");
  d.write(name + "/steps/one/tests/test.sh", "echo '{\"reward\": 1, \"quality\": 0.5}' > /logs/verifier/reward.json\n");
  d.write(name + "/steps/one/solution/solve.sh", "echo from-one > /outdir/result.txt\n");
  d.write(name + "/steps/two/instruction.md", "Write notes.txt.\n");
  d.write(name + "/steps/two/tests/test.sh", "echo '{\"quality\": 1}' > /logs/verifier/reward.json\n");
  d.write(name + "/steps/two/solution/solve.sh", "echo from-two > notes.txt\n");
  auto task = rig.load(d.dir() + "/" + name);

  auto r = rig.run(task, trial::AgentChoice::Kind::kOracle);
  CAPTURE(r.error);
  CAPTURE(reasons_of(r));
  REQUIRE(r.outcome == results::Outcome::kGraded);
  CHECK(r.grade.components.at("step.one") == 1.0);
  CHECK(r.grade.components.at("step.two") == 1.0);
  CHECK(r.grade.components.at("reward") == 0.5);
  CHECK(r.grade.components.at("reward.quality") == 0.75);
  CHECK(r.grade.score == 0.5);
  CHECK_FALSE(r.grade.binary_pass);

  TempFiles out_dir("forgectl-harbor-stepart-out-");
  auto run = results::RunDir::open(out_dir.dir(), [](std::string_view t) { return std::string(t); });
  REQUIRE(run.has_value());
  REQUIRE(trial::write_trial_files(*run, r, "").has_value());
  const fs::path steps = fs::path(out_dir.dir()) / "trials" / name / "0" / "logs" / "steps";
  auto text = [](const fs::path& p) {
    std::ifstream f(p);
    return std::string((std::istreambuf_iterator<char>(f)), {});
  };
  CHECK(text(steps / "one" / "artifacts" / "outdir" / "result.txt") == "from-one\n");
  CHECK(text(steps / "two" / "artifacts" / "two-notes.txt") == "from-two\n");
  CHECK_FALSE(fs::exists(steps / "two" / "artifacts" / "outdir"));   // step one's list is step one's
  CHECK_FALSE(fs::exists(steps / "one" / "artifacts" / "two-notes.txt"));
  CHECK(fs::exists(steps / "two" / "verifier" / "reward.json"));
  CHECK(rig.left_nothing());
}

TEST_CASE("harbor steps setup: setup.sh reads /dev/null, runs as the given ids, leaves no copy; past its time it is killed") {
  TempFiles d("forgectl-harbor-setup-");
  auto setup = [&](const std::string& script, Millis timeout) {
    d.write("t/steps/s/workdir/setup.sh", script);
    manifest::HarborTask task;
    task.dir = d.dir() + "/t";
    manifest::StepConfig step;
    step.name = "s";
    step.setup_script = task.dir + "/steps/s/workdir/setup.sh";
    TestContainer box(engine::ContainerSpec{});
    auto st = trial::run_harbor_step_setup(*docker_env().client, box.id, task, step, "/tmp", 1000, 1000, nullptr, timeout);
    // What it left, read as root after it.
    engine::ExecOptions o;
    o.cmd = {"sh", "-c", "cat /tmp/out.txt 2>/dev/null; ls /tmp | grep -c '^tmp\\.' || true"};
    auto left = engine::exec_run(*docker_env().client, box.id, o);
    REQUIRE(left.has_value());
    return std::make_pair(st, left->out);
  };
  auto [ok, out] = setup("if read x; then echo got-input; else echo no-input; fi > out.txt; id -u >> out.txt\n", Millis(60000));
  CAPTURE(out);
  REQUIRE_MESSAGE(ok.has_value(), (ok ? "" : ok.error().what()));
  CHECK(out == "no-input\n1000\n0\n");  // stdin empty, as 1000, in the workspace; no temporary copy left

  auto [failed, out2] = setup("echo half-done; exit 3\n", Millis(60000));
  REQUIRE_FALSE(failed.has_value());
  CHECK(failed.error().code == Errc::kUnavailable);
  CHECK(failed.error().what().find("step 's': steps/s/workdir/setup.sh failed (exit code 3)") != std::string::npos);
  CHECK(failed.error().what().find("half-done") != std::string::npos);

  auto [slow, out3] = setup("sleep 60; echo late > out.txt\n", Millis(1500));
  REQUIRE_FALSE(slow.has_value());
  CHECK(slow.error().code == Errc::kUnavailable);
  CHECK(slow.error().what().find("timed out after 1 s") != std::string::npos);
  CHECK(out3.find("late") == std::string::npos);
}
