// Graders prepared ahead, through the forgectl binary against the real daemon, for each kind — a
// task's test scripts, checks.py, a Harbor verifier: each trial's grader is made while the trial's
// agent runs (trials.jsonl's ahead_grader) and holds that trial's files alone — the tests pass only
// when exactly one agent's marker is there and no earlier grading left its own, so a grader
// holding another trial's files would fail the oracle; the noop agent failing is the control that
// the tests judge at all. A grader made ahead for a run that is SIGKILLed is an orphan that
// `forgectl down --orphans` removes, with its Harbor verifier's network.
#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "engine/containers.h"
#include "engine/images.h"
#include "engine/networks.h"
#include "manifest/harbor/harbor_load.h"
#include "results/run_json.h"
#include "results/trial_record.h"
#include "stack/labels.h"
#include "stack/task_build.h"
#include "support/checks_py.h"
#include "support/containers.h"
#include "support/docker_env.h"
#include "support/fake_llm_server.h"
#include "support/process.h"
#include "support/run_files.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

// The oracle leaves one marker file of a random name; the tests count the markers in the copy.
std::string write_marker_task(const TempDir& dir) {
  fs::path t = fs::path(dir.path()) / "tasks" / "one-marker";
  fs::create_directories(t / "tests");
  fs::create_directories(t / "solution");
  auto put = [&](const std::string& name, const std::string& text) { std::ofstream(t / name) << text; };
  put("solution/solve.sh", "touch \"marker-$(cat /proc/sys/kernel/random/uuid)\"\n");
  put("tests/test.sh",
      "n=$(ls -A | grep -c '^marker-')\n"
      "echo \"markers: $n\"; ls -A\n"
      "if [ \"$n\" = 1 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n");
  put("task.yaml",
      "task_id: one_marker\nname: marker\ncategory: test\ndescription: \"Leave a marker.\"\n"
      "initial_user_message: \"Leave a marker file.\"\nmax_turns: 5\nenvironment:\n  stack: none\n"
      "tools:\n  agent:\n    enabled: [bash]\n  user:\n    enabled: []\n"
      "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"Thanks. ###STOP###\"}\n"
      "grading: grading.yaml\nsolution:\n  script: solution/solve.sh\n  final_message: \"Done.\"\n");
  put("grading.yaml",
      "combine: {method: weighted, pass_threshold: 0.99}\n"
      "custom_checks:\n  dir: tests\n  command: \"sh /tests/test.sh\"\n  reward_file: /logs/verifier/reward.txt\n"
      "  timeout_seconds: 60\n");
  return t.string();
}

// library-loans (a Python tool server) graded by checks.py alone: the checkout must have succeeded,
// and the grader's HOME must hold no mark of an earlier grading (each grading leaves one).
std::string write_checks_task(const TempDir& dir) {
  const std::string t = copy_example_task("library-loans", dir.path() + "/tasks/checks-fresh");
  std::ofstream(t + "/grading.yaml") << "combine: {method: weighted, pass_threshold: 0.99}\n"
                                        "custom_checks: {file: checks.py, interface_version: \"1.0\"}\n";
  std::ofstream(t + "/checks.py") << std::string("import os\nimport uuid\n") + kChecksPyPreamble + R"PY(
@check
def fresh_grader():
    home = os.environ["HOME"]
    seen = sorted(n for n in os.listdir(home) if n.startswith("graded-"))
    open(os.path.join(home, "graded-" + uuid.uuid4().hex), "w").close()
    inputs = sorted(os.listdir("/forgectl-checks-in"))
    if seen or inputs != ["final.json", "initial.json", "transcript.json"]:
        return CheckFailed(f"not this trial's grader alone: {seen} {inputs}")
    return CheckPassed("a fresh grader")


@check
def lent():
    calls = [c for c in _ctx.tool_calls if c.name == "checkout_book" and c.status == "success"]
    return CheckPassed("lent") if len(calls) == 1 else CheckFailed(f"{len(calls)} checkouts")
)PY";
  return t;
}

// A Harbor task FROM `base` (forgectl's runner image under a test tag, nothing pulled): the oracle
// leaves one marker; the verifier counts the markers and its own marks of earlier gradings.
// `verifier_toml`: more [verifier] lines (its network).
std::string write_harbor_task(const TempDir& dir, const std::string& name, const std::string& base,
                              const std::string& verifier_toml = "") {
  fs::path t = fs::path(dir.path()) / "tasks" / name;
  for (const char* d : {"environment", "tests", "solution"}) fs::create_directories(t / d);
  auto put = [&](const std::string& file, const std::string& text) { std::ofstream(t / file) << text; };
  put("task.toml", "version = \"1.0\"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n" + verifier_toml +
                       "[environment]\nnetwork_mode = \"no-network\"\nmemory_mb = 512\n");
  put("instruction.md", "Leave a marker file.\n");
  put("environment/Dockerfile",
      "FROM " + base + "\nWORKDIR /work\nUSER 1000:1000\nLABEL io.forgectl.test.task=" + name + "\n");
  put("solution/solve.sh", "touch \"marker-$(cat /proc/sys/kernel/random/uuid)\"\n");
  put("tests/test.sh",
      "n=$(ls -A | grep -c '^marker-')\n"
      "seen=$(ls -A /logs/verifier \"$HOME\" | grep -c '^graded-')\n"
      "touch \"$HOME/graded-$$\" \"/logs/verifier/graded-$$\"\n"
      "echo \"markers: $n, earlier gradings: $seen\"\n"
      "if [ \"$n\" = 1 ] && [ \"$seen\" = 0 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n");
  return t.string();
}

// forgectl's runner image tagged as a Harbor task's base; removed with the images built FROM it.
struct HarborBase {
  std::string repo = "forgectl-test/ahead-base", tag = random_hex(5), name = repo + ":" + tag;
  std::vector<std::string> tasks;
  HarborBase() {
    auto st = engine::tag_image(*docker_env().client, docker_env().runner_image, repo, tag);
    REQUIRE_MESSAGE(st.has_value(), (st ? "" : st.error().what()));
  }
  ~HarborBase() {
    for (const auto& dir : tasks)
      if (auto t = manifest::load_harbor_task_config(dir))
        if (auto ctx = stack::task_build_context(*t->environment.manifest.runner.build))
          (void)engine::remove_image(*docker_env().client, stack::task_image_tag("runner", ctx->hash));
    (void)engine::remove_image(*docker_env().client, name);
  }
};

void check_fresh_graders(const std::string& task) {
  TempDir dir;
  std::string out = dir.path() + "/run";
  auto r = forgectl_run(
      {"run", task, "--agent", "oracle", "--agent", "noop", "--trials", "3", "--concurrency", "2", "--out", out});
  REQUIRE_MESSAGE(r.code == 0, r.text());
  auto trials = trials_of(out);
  REQUIRE(trials.size() == 6);
  for (const auto& t : trials) {
    CAPTURE(t.agent);
    CAPTURE(t.trial_index);
    CAPTURE(t.error);
    CHECK(t.outcome == results::Outcome::kGraded);
    CHECK(t.phases_s.count("ahead_grader") == 1);
    // One marker for the oracle's (its own), none for noop's: never another trial's.
    CHECK_MESSAGE(t.binary_pass == (t.agent == "oracle"), t.score);
  }
  CHECK(r.out.find("leak audit: nothing of run") != std::string::npos);
}

}  // namespace

TEST_CASE("grader ahead: checks.py — each trial's checks container is made ahead and holds that trial's alone") {
  TempDir dir;
  check_fresh_graders(write_checks_task(dir));
}

TEST_CASE("grader ahead: a Harbor verifier is made ahead and holds that trial's files alone") {
  TempDir dir;
  HarborBase base;
  base.tasks.push_back(write_harbor_task(dir, "ahead-marker", base.name));
  check_fresh_graders(base.tasks.back());
}

TEST_CASE("grader ahead: graders made ahead for a SIGKILLed run, with a verifier's network, are orphans down removes") {
  TempDir dir;
  HarborBase base;
  base.tasks.push_back(write_harbor_task(dir, "ahead-killed", base.name, "network_mode = \"public\"\n"));
  const std::string checks = write_checks_task(dir);
  FakeLlmServer server;
  ScriptedResponse hang;
  hang.held = true;  // both trials wait on their model, their graders made ahead meanwhile
  server.push(hang, 20);
  std::string cfg = dir.path() + "/run.yaml";
  std::ofstream(cfg)
      << "models:\n  agent: {provider: openai, name: gpt-4o, base_url: \"" << server.base_url()
      << "\", api_key_env: FORGECTL_TEST_KEY}\norchestrator:\n  timeouts: {turn_s: 120, episode_s: 300}\n";
  std::string out = dir.path() + "/run";
  auto p = spawn_forgectl({"run", base.tasks.back(), checks, "--config", cfg, "--agent", "llm", "--trials", "1",
                           "--concurrency", "2", "--out", out},
                          {{"FORGECTL_TEST_KEY", "sk-test"}});
  REQUIRE(p.has_value());
  auto& c = *docker_env().client;
  std::string run_id;
  std::size_t graders = 0, networks = 0;
  for (auto until = Clock::now() + std::chrono::seconds(240); Clock::now() < until && (graders < 2 || networks == 0);) {
    std::this_thread::sleep_for(Millis(200));
    if (run_id.empty())
      if (auto rj = results::RunJson::read(out + "/run.json")) run_id = rj->run_id;
    if (run_id.empty()) continue;
    auto f = by_label(stack::kLabelRun, run_id);
    f["label"].push_back(std::string(stack::kLabelRole) + "=grader");
    f["status"] = {"running"};
    if (auto l = engine::list_containers(c, f)) graders = l->size();
    // The verifier's own stack: a network beside the trials' (none of which has any: no-network).
    if (auto n = engine::list_networks(c, by_label(stack::kLabelRun, run_id))) networks = n->size();
  }
  REQUIRE_MESSAGE(graders == 2, "stdout:\n" << (*p)->out() << "\nstderr:\n" << (*p)->err());
  CHECK(networks >= 1);
  (*p)->kill(SIGKILL);
  (void)(*p)->wait_for(Millis(30000));
  server.release();
  check_orphans_then_down_removes_all(c, run_id);  // nothing removed them: the owner died
}

TEST_CASE("grader ahead: each trial's grader is made ahead and holds that trial's files alone") {
  TempDir dir;
  check_fresh_graders(write_marker_task(dir));
}
