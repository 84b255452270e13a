// Red team, test-script grading: the example task graded by its hidden tests, each trial's agent
// the oracle whose "solution" installs the program under test. Programs that read the hidden
// tests, forge the reward, kill the verifier or leave a process to rewrite the reward after the
// tests must not pass; an honest program is scored on its merits, right or wrong.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "engine/archive.h"
#include "engine/exec.h"
#include "engine/tar.h"
#include "manifest/task_parse.h"
#include "support/containers.h"
#include "support/run_files.h"
#include "support/stack_env.h"
#include "support/trial_rig.h"
#include "trial/grader_setup.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

// The example task in `dir`; with `program`, solution/solve.sh installs it as bin/csvsum instead
// of the reference solution.
manifest::TaskConfig script_tests_task(const TempDir& dir, const std::string& program = "") {
  copy_example_task("script-tests", dir.path());
  if (!program.empty())
    dir.write("solution/solve.sh",
              "set -e\nmkdir -p bin\ncat > bin/csvsum <<'PROGRAM'\n" + program + "PROGRAM\nchmod +x bin/csvsum\n");
  auto t = manifest::load_task(dir.path() + "/task.yaml");
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  return std::move(*t);
}

// Oracle trials; each must leave no container behind (the grader included).
struct OracleRig : TrialRig {
  trial::TrialResult run(const manifest::TaskConfig& task) {
    auto r = TrialRig::run(task, {trial::AgentChoice::Kind::kOracle});
    CHECK_MESSAGE(containers().empty(), "the trial left containers behind (the grader included)");
    return r;
  }
};

double custom_checks(const trial::TrialResult& r) {
  REQUIRE_MESSAGE(r.outcome == results::Outcome::kGraded, r.error);
  REQUIRE(r.grade.components.count("custom_checks"));
  return r.grade.components.at("custom_checks");
}

// Finds the expected value of its input in the hidden tests, which the old grader ran beside it.
constexpr const char* kGrepTests = R"(#!/bin/sh
tests=${CHEAT_TESTS:-/tests}
v=$(grep -rh -- "${1##*/}" "$tests" 2>/dev/null | grep -o -- '-\{0,1\}[0-9][0-9]*\.[0-9][0-9]' | head -n 1)
echo "${v:-0.00}"
)";

// Writes a perfect reward, then kills every process it can reach.
constexpr const char* kForgeAndKill = R"(#!/bin/sh
mkdir -p /logs/verifier 2>/dev/null
echo 1 > /logs/verifier/reward.txt 2>/dev/null
kill -9 -1
)";

// Leaves processes behind (one escaping into its own session) that keep writing a perfect reward
// after the tests have ended, then answers wrongly.
constexpr const char* kBackgroundRewrite = R"(#!/bin/sh
( trap '' HUP TERM; i=0; while [ $i -lt 300 ]; do echo 1 > /logs/verifier/reward.txt 2>/dev/null; i=$((i+1)); sleep 0.05; done ) </dev/null >/dev/null 2>&1 &
setsid sh -c 'i=0; while [ $i -lt 300 ]; do echo 1 > /logs/verifier/reward.txt 2>/dev/null; i=$((i+1)); sleep 0.05; done' </dev/null >/dev/null 2>&1 &
echo 0.00
)";

}  // namespace

TEST_CASE("attack, grader: the honest correct program passes and an honest wrong one fails") {
  OracleRig rig;
  TempDir good_dir, wrong_dir;
  auto good = rig.run(script_tests_task(good_dir));
  CHECK_MESSAGE(custom_checks(good) == doctest::Approx(1.0), reasons_of(good));
  CHECK(good.grade.binary_pass);

  auto wrong = rig.run(script_tests_task(wrong_dir, "#!/bin/sh\necho 0.00\n"));
  // "executable" and "header only" (0.00) hold; the four sums do not.
  CHECK_MESSAGE(custom_checks(wrong) == doctest::Approx(0.3333), reasons_of(wrong));
  CHECK_FALSE(wrong.grade.binary_pass);
}

TEST_CASE("attack, grader: a program that greps the hidden tests for the expected values cannot read them") {
  // The control: with the tests readable, this program would answer every case right.
  for (const auto& [file, expected] : std::vector<std::pair<std::string, std::string>>{
           {"reordered.csv", "25.00"}, {"crlf.csv", "3.75"}, {"many.csv", "1250.56"}, {"sales.csv", "300.00"}}) {
    TempDir tmp;
    std::string prog = tmp.write("cheat.sh", kGrepTests);
    std::string cmd = "CHEAT_TESTS='" + example_task("script-tests") + "/tests' sh '" + prog + "' /x/" + file;
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p);
    char buf[64] = {0};
    std::string got = std::fgets(buf, sizeof buf, p) ? buf : "";
    ::pclose(p);
    CHECK(got == expected + "\n");
  }
  OracleRig rig;
  TempDir dir;
  auto r = rig.run(script_tests_task(dir, kGrepTests));
  CHECK_MESSAGE(custom_checks(r) == doctest::Approx(0.3333), reasons_of(r));  // as the wrong program
  CHECK_FALSE(r.grade.binary_pass);
}

TEST_CASE("attack, grader: a program that writes reward.txt = 1 and runs kill -9 -1 does not pass") {
  OracleRig rig;
  TempDir dir;
  auto r = rig.run(script_tests_task(dir, kForgeAndKill));
  // Only "executable" holds: each run of the program killed itself (and nothing of the verifier).
  CHECK_MESSAGE(custom_checks(r) == doctest::Approx(0.1667), reasons_of(r));
  CHECK(reasons_of(r).find("reward 0.1667 from \"/logs/verifier/reward.txt\"") != std::string::npos);
  CHECK_FALSE(r.grade.binary_pass);
}

TEST_CASE("attack, grader: processes left to rewrite the reward after the tests do not make a pass") {
  OracleRig rig;
  TempDir dir;
  auto r = rig.run(script_tests_task(dir, kBackgroundRewrite));
  CHECK_MESSAGE(custom_checks(r) == doctest::Approx(0.3333), reasons_of(r));
  CHECK_FALSE(r.grade.binary_pass);
}

TEST_CASE("attack, grader: a program that exits 0 and prints nothing fails") {
  OracleRig rig;
  TempDir dir;
  auto r = rig.run(script_tests_task(dir, "#!/bin/sh\nexit 0\n"));
  CHECK_MESSAGE(custom_checks(r) == doctest::Approx(0.1667), reasons_of(r));
  CHECK_FALSE(r.grade.binary_pass);
}

TEST_CASE("attack, grader: a do-nothing agent fails (no program at all)") {
  OracleRig rig;
  TempDir dir;
  auto task = script_tests_task(dir, "#!/bin/sh\nexit 0\n");
  auto r = trial::run_trial(task, 0, 1, {trial::AgentChoice::Kind::kNoop}, rig.env);
  CHECK_MESSAGE(custom_checks(r) == doctest::Approx(0.0), reasons_of(r));
  CHECK_FALSE(r.grade.binary_pass);
}

TEST_CASE("grader: the workspace copy is the agent's, tests and reward the verifier's, setuid gone") {
  auto& c = *docker_env().client;
  engine::ContainerSpec spec;
  spec.host.network_mode = "none";
  spec.volumes = {"/work"};
  TestContainer runner(spec);
  // As root in the source: a setuid-root shell, a file of uid 0 with mode 0600, a link, a fifo.
  engine::ExecOptions o{{"sh", "-c",
                         "cd /work && mkdir -p bin && cp /bin/busybox bin/rootsh && chmod 4755 bin/rootsh && "
                         "echo secret > root-only && chmod 600 root-only && ln -s /tests/test.sh peek && "
                         "mkfifo pipe && chown 123:456 pipe"}};
  o.user = "0:0";
  auto made = engine::exec_run(c, runner.id, o);
  REQUIRE(made.has_value());
  REQUIRE_MESSAGE(made->exit_code == 0, made->err);

  engine::ContainerSpec gspec;
  gspec.host.network_mode = "none";
  gspec.volumes = {"/work"};
  TestContainer grader(gspec, false);
  must(trial::copy_workspace(c, runner.id, "/work", grader.id, 0));
  must(engine::start_container(c, grader.id));
  engine::ExecOptions ls{
      {"sh", "-c", "cd /work && for f in . bin bin/rootsh root-only peek pipe; do stat -c '%n %u:%g %a %F' $f; done"}};
  auto r = engine::exec_run(c, grader.id, ls);
  REQUIRE(r.has_value());
  CHECK(r->out ==
        ". 1000:1000 755 directory\n"
        "bin 1000:1000 755 directory\n"
        "bin/rootsh 1000:1000 755 regular file\n"
        "root-only 1000:1000 600 regular file\n"
        "peek 1000:1000 777 symbolic link\n"
        "pipe 1000:1000 644 fifo\n");
}

namespace {

// A task whose test.sh runs the agent's program directly, as the verifier (the unsafe pattern
// docs/grading.md warns about), with `solve` as the oracle's one bash call.
constexpr const char* kDirectTests =
    "got=$(./bin/tool)\nif [ \"$got\" = 42 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n";

// `tests`: test.sh, the one above unless given.
manifest::TaskConfig direct_run_task(const TempDir& dir, const std::string& solve,
                                     const std::string& tests = kDirectTests) {
  dir.write("task.yaml",
            "task_id: spoil_reward\nname: spoil\ncategory: c\ndescription: d\n"
            "initial_user_message: \"Write bin/tool that prints 42\"\n"
            "environment:\n  network_policy: no_internet\n  stack: none\n"
            "tools:\n  agent: {enabled: [bash]}\n  user: {enabled: []}\n"
            "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"ok ###STOP###\"}\n"
            "grading: grading.yaml\n"
            "solution:\n  tool_calls:\n    - {name: bash, arguments: {command: \"" +
                solve + "\"}}\n");
  dir.write("grading.yaml", "custom_checks:\n  dir: tests\n  reward_file: /logs/verifier/reward.txt\n");
  fs::create_directories(dir.path() + "/tests");
  dir.write("tests/test.sh", tests);
  auto t = manifest::load_task(dir.path() + "/task.yaml");
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  return std::move(*t);
}

}  // namespace

// The cheat: a wrong program that, run by the tests, makes the reward file a directory. Before, the
// grader's failure to read it made the trial an infra error — retried, then left out of every
// rate — for a program that fails. Now it scores 0; the honest program still passes.
TEST_CASE("attack, grader: a program that spoils the reward file scores 0, never an uncounted infra error") {
  OracleRig rig;
  TempDir spoil_dir, honest_dir;
  auto spoiled =
      rig.run(direct_run_task(spoil_dir,
                              "mkdir -p bin && printf '#!/bin/sh\\\\nrm -f /logs/verifier/reward.txt; mkdir -p "
                              "/logs/verifier/reward.txt; echo 41\\\\n' > bin/tool && chmod +x bin/tool"));
  CHECK_MESSAGE(custom_checks(spoiled) == doctest::Approx(0.0), reasons_of(spoiled));
  CHECK(reasons_of(spoiled).find("gave no value") != std::string::npos);
  CHECK_FALSE(spoiled.grade.binary_pass);
  auto honest = rig.run(direct_run_task(
      honest_dir, "mkdir -p bin && printf '#!/bin/sh\\\\necho 42\\\\n' > bin/tool && chmod +x bin/tool"));
  CHECK_MESSAGE(custom_checks(honest) == doctest::Approx(1.0), reasons_of(honest));
  CHECK(honest.grade.binary_pass);
}

namespace {

constexpr const char* kHonestTool =
    "mkdir -p bin && printf '#!/bin/sh\\\\necho 42\\\\n' > bin/tool && chmod +x bin/tool";

// A program that prints 42 after running `cheat` (as the verifier: direct_run_task's unsafe tests).
std::string tool_that(const std::string& cheat) {
  return "mkdir -p bin && printf '#!/bin/sh\\\\n" + cheat + "; echo 42\\\\n' > bin/tool && chmod +x bin/tool";
}

}  // namespace

// The reward is read in the running grader by one exec, after it has killed every other process
// (docs/grading.md, "Reading the reward"), with the answers a read from a stopped container gave:
// a link, a file behind a directory the verifier closed, or one too large gives no value (0); a
// missing one leaves the verdict to the exit code; an honest one counts.
TEST_CASE("grader: the reward read in place — a link, a closed directory or 70000 bytes give no value") {
  OracleRig rig;
  SUBCASE("a link to a file the tests then write") {
    TempDir dir;
    auto r = rig.run(direct_run_task(dir, tool_that("ln -sf /tmp/r /logs/verifier/reward.txt")));
    CHECK_MESSAGE(custom_checks(r) == doctest::Approx(0.0), reasons_of(r));
    CHECK(reasons_of(r).find("gave no value: it is not a regular file") != std::string::npos);
  }
  SUBCASE("the reward's directory closed to the verifier after the tests wrote it") {
    TempDir dir;
    auto r = rig.run(direct_run_task(dir, kHonestTool, std::string(kDirectTests) + "chmod 000 /logs/verifier\n"));
    CHECK_MESSAGE(custom_checks(r) == doctest::Approx(0.0), reasons_of(r));
    CHECK(reasons_of(r).find("gave no value: it is not a regular file") != std::string::npos);
  }
  SUBCASE("a reward file past 64 KiB") {
    TempDir dir;
    auto r = rig.run(direct_run_task(dir, kHonestTool, "head -c 70001 /dev/zero > /logs/verifier/reward.txt\n"));
    CHECK_MESSAGE(custom_checks(r) == doctest::Approx(0.0), reasons_of(r));
    CHECK(reasons_of(r).find("it is 70001 bytes; at most 65536 are read") != std::string::npos);
  }
  SUBCASE("no reward file: the exit code decides") {
    TempDir dir;
    auto r = rig.run(direct_run_task(dir, kHonestTool, "test \"$(./bin/tool)\" = 42\n"));
    CHECK_MESSAGE(custom_checks(r) == doctest::Approx(1.0), reasons_of(r));
    CHECK(reasons_of(r).find("PASS: exit code 0 (no value in reward file") != std::string::npos);
  }
  SUBCASE("the honest control") {
    TempDir dir;
    auto r = rig.run(direct_run_task(dir, kHonestTool));
    CHECK_MESSAGE(custom_checks(r) == doctest::Approx(1.0), reasons_of(r));
    CHECK(reasons_of(r).find("custom_checks: reward 1") != std::string::npos);
  }
}
