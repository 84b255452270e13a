// Set up once, fork many (docs/sweeps.md "Forks"), through the forgectl binary against the real
// daemon: a task's slow setup_script runs in one trial of the run, every other trial starts from
// its snapshot with the same hashed workspace and json-db row, nothing an agent wrote reaches the
// next trial, and the snapshot image is gone when the run ends; --no-fork and setup_fork: false
// run setup in every trial.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>

#include "engine/images.h"
#include "results/trial_record.h"
#include "stack/labels.h"
#include "support/fork_task.h"
#include "support/process.h"
#include "support/run_files.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

double setup_seconds(const results::TrialRecord& r) {
  for (const char* k : {"setup", "ahead_setup"})
    if (auto it = r.phases_s.find(k); it != r.phases_s.end()) return it->second;
  return -1;
}

std::size_t snapshot_images(const std::string& run_id) {
  auto is = engine::list_images(*docker_env().client,
                                {{"label", {std::string(stack::kLabelSnapshot) + "=" + run_id}}});
  REQUIRE(is.has_value());
  return is->size();
}

}  // namespace

TEST_CASE("fork: 8 trials of a 5 s setup run it once; every fork starts byte-identical, json-db row in, agents' files out") {
  TempDir dir;
  const std::string task = write_fork_task(fs::path(dir.path()) / "fork_probe", 5);
  const std::string out = dir.path() + "/run";
  auto r = forgectl_run({"run", task, "--agent", "oracle", "--trials", "8", "--concurrency", "2", "--out", out});
  REQUIRE_MESSAGE(r.code == 0, r.text());
  auto trials = trials_of(out);
  REQUIRE(trials.size() == 8);
  std::size_t taken = 0, forked = 0, quick = 0;
  std::set<std::string> images, hashes;
  for (const auto& t : trials) {
    CAPTURE(t.trial_index);
    CHECK(t.outcome == results::Outcome::kGraded);
    CHECK(t.score == doctest::Approx(1.0));  // the fixture row there, no earlier trial's plant seen
    taken += t.snapshot_source == "taken";
    forked += t.snapshot_source == "forked";
    images.insert(t.snapshot_image);
    hashes.insert(t.workspace_sha256);
    quick += t.snapshot_source == "forked" && setup_seconds(t) < 4.0;
  }
  // setup.txt holds a nanosecond timestamp: one starting hash for all 8 means the script ran once.
  CHECK(taken == 1);
  CHECK(forked == 7);
  // A fork's setup skips the 5 s script; only those that began beside the first trial (the other
  // slot, a sandbox prepared ahead) waited for its snapshot.
  CHECK(quick >= 5);
  CHECK(images.size() == 1);
  CHECK(hashes.size() == 1);
  CHECK(hashes.begin()->size() == 64);
  CHECK(images.begin()->starts_with("sha256:"));
  auto run_id = json_file(out + "/run.json");
  CHECK(snapshot_images(json::get_string(run_id, "run_id")) == 0);
  CHECK_MESSAGE(r.out.find("leak audit: nothing") != std::string::npos, r.out);
  auto shown = forgectl_run({"show", out, "fork_probe", "5"});
  CHECK_MESSAGE(shown.out.find("8 of the 8 trial(s) of this snapshot started identical") != std::string::npos, shown.out);
}

TEST_CASE("fork: --no-fork and setup_fork: false run setup in every trial; --no-fork refuses --keep-snapshots") {
  TempDir dir;
  const std::string opted = write_fork_task(fs::path(dir.path()) / "tasks" / "opted_out", 1, "  setup_fork: false\n");
  const std::string plain = write_fork_task(fs::path(dir.path()) / "plain" / "plain", 1);
  auto a = forgectl_run({"run", opted, "--agent", "oracle", "--trials", "2", "--out", dir.path() + "/a"});
  REQUIRE_MESSAGE(a.code == 0, a.text());
  auto b = forgectl_run(
      {"run", plain, "--agent", "oracle", "--trials", "2", "--no-fork", "--out", dir.path() + "/b"});
  REQUIRE_MESSAGE(b.code == 0, b.text());
  for (const auto* run : {"/a", "/b"}) {
    auto trials = trials_of(dir.path() + run);
    REQUIRE(trials.size() == 2);
    for (const auto& t : trials) {
      CAPTURE(run);
      CHECK(t.score == doctest::Approx(1.0));
      CHECK(t.snapshot_source.empty());
      CHECK(setup_seconds(t) >= 1.0);
    }
  }
  // Keeping the snapshots of a run that forks nothing is a contradiction, named before any trial.
  auto both = forgectl_run(
      {"run", plain, "--agent", "oracle", "--no-fork", "--keep-snapshots", "--out", dir.path() + "/c"});
  CHECK(both.code == 2);
  CHECK_MESSAGE(both.err.find("--keep-snapshots with --no-fork") != std::string::npos, both.err);
  CHECK_FALSE(fs::exists(dir.path() + "/c/trials.jsonl"));
}

namespace {

// The "BOOT-<ns>" mark of the server's state as the trial's env.yaml shows it.
std::string boot_mark(const std::string& run_dir, const results::TrialRecord& t) {
  const std::string env = slurp(fs::path(run_dir) / t.trial_dir / "env.yaml");
  auto at = env.find("BOOT-");
  if (at == std::string::npos) return "";
  auto end = env.find_first_not_of("0123456789", at + 5);
  return env.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

}  // namespace

TEST_CASE("fork: a Python tool server's set-up state is in the snapshot; every fork's server starts from it, no agent's change carried") {
  TempDir dir;
  const std::string task = write_python_fork_task(fs::path(dir.path()) / "py_fork");
  const std::string out = dir.path() + "/run";
  auto r = forgectl_run({"run", task, "--agent", "oracle", "--trials", "3", "--concurrency", "1", "--out", out});
  REQUIRE_MESSAGE(r.code == 0, r.text());
  auto trials = trials_of(out);
  REQUIRE(trials.size() == 3);
  std::size_t taken = 0, forked = 0;
  std::set<std::string> boots, hashes;
  for (const auto& t : trials) {
    CAPTURE(t.trial_index);
    CHECK(t.outcome == results::Outcome::kGraded);
    CHECK(t.score == doctest::Approx(1.0));  // notes == [by-agent]: no earlier trial's note in its server
    taken += t.snapshot_source == "taken";
    forked += t.snapshot_source == "forked";
    hashes.insert(t.workspace_sha256);
    boots.insert(boot_mark(out, t));
  }
  CHECK(taken == 1);  // setup ran once: one set-up workspace (setup.txt's timestamp) for all three
  CHECK(forked == 2);
  CHECK(hashes.size() == 1);
  // Each trial's server started in its own container at its own time: one mark for all three
  // means every fork's server was seeded with the snapshot trial's set-up state.
  REQUIRE(boots.size() == 1);
  CHECK(boots.begin()->size() > 10);
  CHECK(snapshot_images(json::get_string(json_file(out + "/run.json"), "run_id")) == 0);
  CHECK_MESSAGE(r.out.find("leak audit: nothing") != std::string::npos, r.out);
}

TEST_CASE("fork: --keep-snapshots keeps a task's snapshot for the next run, which runs no setup; a changed setup script runs it again") {
  TempDir dir;
  const fs::path task_dir = fs::path(dir.path()) / "kept_probe";
  const std::string task = write_fork_task(task_dir, 1, "", false);
  auto run = [&](const std::string& name) {
    auto r = forgectl_run({"run", task, "--agent", "oracle", "--trials", "2", "--concurrency", "1", "--keep-snapshots",
                           "--out", dir.path() + "/" + name});
    REQUIRE_MESSAGE(r.code == 0, r.text());
    CHECK_MESSAGE(r.out.find("leak audit: nothing") != std::string::npos, r.out);  // a kept snapshot is no leak
    return trials_of(dir.path() + "/" + name);
  };
  auto sources = [](const std::vector<results::TrialRecord>& ts) {
    std::multiset<std::string> out;
    for (const auto& t : ts) {
      CHECK(t.score == doctest::Approx(1.0));
      out.insert(t.snapshot_source);
    }
    return out;
  };
  auto first = run("a");
  CHECK(sources(first) == std::multiset<std::string>{"forked", "taken"});
  const std::string image = first[0].snapshot_image;
  REQUIRE(image.starts_with("sha256:"));
  // Kept past the run, and not a dead owner's orphan.
  auto orphans = forgectl_run({"down", "--orphans"});
  CHECK(engine::inspect_image(*docker_env().client, image).has_value());

  auto second = run("b");
  CHECK(sources(second) == std::multiset<std::string>{"kept", "kept"});  // setup ran in no trial
  for (const auto& t : second) {
    CHECK(t.snapshot_image == image);
    CHECK(t.workspace_sha256 == first[0].workspace_sha256);  // setup.txt's timestamp: the first run's
  }

  std::ofstream(task_dir / "setup.sh", std::ios::app) << "echo changed >> setup.txt\n";
  auto third = run("c");
  CHECK(sources(third) == std::multiset<std::string>{"forked", "taken"});  // a new content key: setup ran once
  std::set<std::string> images;
  for (const auto& t : third) images.insert(t.snapshot_image);
  REQUIRE(images.size() == 1);
  CHECK(*images.begin() != image);

  auto down = forgectl_run({"down", "--snapshots"});
  REQUIRE_MESSAGE(down.code == 0, down.text());
  CHECK(down.out.find("removed kept snapshot image " + image) != std::string::npos);
  CHECK(down.out.find("removed kept snapshot image " + *images.begin()) != std::string::npos);
  CHECK_FALSE(engine::inspect_image(*docker_env().client, image).has_value());
  CHECK_FALSE(engine::inspect_image(*docker_env().client, *images.begin()).has_value());
}

// A runner image of the task's own whose USER is a name: setup and the initial files belong to
// that user's uid, asked of the runner, never root. Before, a name fell back to root: the agent
// could not change what setup made. Forked or not, the same owner.
TEST_CASE("fork: a runner image whose USER is a name owns what setup made; the agent can change it in every trial") {
  engine::TarWriter ctx;
  REQUIRE(ctx.add_file("Dockerfile", "FROM " + docker_env().runner_image + "\nUSER agent\n").has_value());
  engine::BuildSpec spec;
  auto tar = ctx.finish();
  REQUIRE(tar.has_value());
  spec.context_tar = std::move(*tar);
  spec.tags = {"forgectl-test/named-user:" + docker_env().run_value};
  spec.labels = test_labels();
  auto built = engine::build_image(*docker_env().client, spec);
  REQUIRE_MESSAGE(built.has_value(), (built ? "" : built.error().what()));
  struct Untag {
    std::string name;
    ~Untag() { (void)engine::remove_image(*docker_env().client, name); }
  } untag{spec.tags[0]};
  TempDir dir;
  const fs::path task = fs::path(dir.path()) / "named_user";
  // The honest oracle appends to setup's file; a root-owned one would refuse it.
  write_fork_task(task, 0, "  runner: {image: \"" + untag.name + "\"}\n", false,
                  "; echo agent >> setup.txt && echo appended >> status.txt");
  std::ofstream(task / "grading.yaml") << "combine: {method: weighted, pass_threshold: 0.99}\n"
                                          "state_checks:\n  jsonpaths:\n"
                                          "    - {path_glob: \"/env/fs/agent-visible/status.txt\", contains_ci: \"appended\"}\n";
  const std::string out = dir.path() + "/run";
  auto r = forgectl_run({"run", task.string(), "--agent", "oracle", "--trials", "2", "--concurrency", "1", "--out", out});
  CHECK_MESSAGE(r.code == 0, r.text());
  auto trials = trials_of(out);
  REQUIRE(trials.size() == 2);
  std::set<std::string> sources;
  for (const auto& t : trials) {
    CAPTURE(t.snapshot_source);
    sources.insert(t.snapshot_source);
    CHECK(t.outcome == results::Outcome::kGraded);
    CHECK(t.score == doctest::Approx(1.0));
  }
  CHECK(sources == std::set<std::string>{"taken", "forked"});
}
