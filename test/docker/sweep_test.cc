// Sweeps through the forgectl binary against the real daemon, on the bundled example tasks with the
// oracle agent: durable results, SIGINT then --resume equal to an uninterrupted run, a changed
// task redone, a torn last line survived, shards merged back into the whole, one run per
// directory, and nothing left behind.
#include <doctest/doctest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "core/json.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "engine/client.h"
#include "engine/docker_host.h"
#include "results/run_json.h"
#include "results/trial_record.h"
#include "support/process.h"
#include "support/run_files.h"
#include "support/second_engine.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

// Two of the example tasks (the quickest: files and json-db), copied so a test may change them.
std::string copy_examples(const TempDir& dir) {
  fs::path to = fs::path(dir.path()) / "tasks";
  fs::create_directories(to);
  for (const char* t : {"files-basic", "orders-db"}) copy_example_task(t, (to / t).string());
  return to.string();
}

std::size_t lines_of(const std::string& path) {
  std::ifstream in(path);
  std::size_t n = 0;
  for (std::string l; std::getline(in, l);) n += !l.empty();
  return n;
}

}  // namespace

TEST_CASE("sweep: SIGINT leaves a resumable directory; --resume finishes it and equals an uninterrupted run") {
  TempDir dir;
  std::string tasks = copy_examples(dir);
  std::string whole = dir.path() + "/whole", cut = dir.path() + "/cut";

  auto full = forgectl_run({"run", tasks, "--agent", "oracle", "--trials", "3", "--concurrency", "2", "--out", whole});
  REQUIRE_MESSAGE(full.code == 0, full.text());
  CHECK(lines_of(whole + "/trials.jsonl") == 6);
  CHECK(full.out.find("leak audit: nothing of run") != std::string::npos);
  CHECK(fs::exists(whole + "/report.html"));

  auto p = spawn_forgectl({"run", tasks, "--agent", "oracle", "--trials", "3", "--concurrency", "2", "--out", cut});
  REQUIRE(p.has_value());
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (lines_of(cut + "/trials.jsonl") < 1 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  (*p)->kill(SIGINT);
  auto code = (*p)->wait_for(Millis(120000));
  std::string first = "stdout:\n" + (*p)->out() + "\nstderr:\n" + (*p)->err();
  REQUIRE_MESSAGE(code.has_value(), first);
  CHECK_MESSAGE(*code == 130, first);
  std::size_t before = lines_of(cut + "/trials.jsonl");
  CHECK(before >= 1);
  CHECK(before < 6);
  CHECK(first.find("forgectl run --resume --out") != std::string::npos);

  // A second run into the same directory without --resume is refused; the results are untouched.
  auto again = forgectl_run({"run", tasks, "--agent", "oracle", "--out", cut});
  CHECK(again.code == 2);
  CHECK(again.err.find("--resume") != std::string::npos);
  CHECK(lines_of(cut + "/trials.jsonl") == before);

  auto run_json_before = results::RunJson::read(cut + "/run.json");
  REQUIRE(run_json_before.has_value());
  CHECK(first.find("interrupted: " + std::to_string(6 - before) + " trial(s) left") != std::string::npos);

  // The recorded invocation is enough to resume, from any working directory, as the same run:
  // same run id, concurrency and limits.
  auto resumed = forgectl_run({"run", "--resume", "--out", cut});
  REQUIRE_MESSAGE(resumed.code == 0, resumed.text());
  CHECK(resumed.err.find("resume: " + std::to_string(before) + " finished, " + std::to_string(6 - before) + " to run") !=
        std::string::npos);
  auto run_json_after = results::RunJson::read(cut + "/run.json");
  REQUIRE(run_json_after.has_value());
  CHECK(run_json_after->run_id == run_json_before->run_id);
  CHECK(resumed.err.find("forgectl run " + run_json_before->run_id) != std::string::npos);
  CHECK(run_json_after->concurrency == 2);
  CHECK(run_json_after->invocation.concurrency == 2);
  CHECK(run_json_after->invocation.limits == run_json_before->invocation.limits);
  for (const auto& p : run_json_after->invocation.task_paths) CHECK(fs::path(p).is_absolute());
  auto records = trials_of(cut);
  CHECK(records.size() == 6);
  CHECK(lines_of(cut + "/trials.jsonl") == 6);  // nothing recorded twice
  std::set<std::string> keys;
  for (const auto& r : records) keys.insert(r.trial_key);
  CHECK(keys.size() == 6);
  CHECK(outcome_view(cut) == outcome_view(whole));
  // Same tasks, agent and trial indexes: the same keys as the uninterrupted run.
  std::set<std::string> whole_keys;
  for (const auto& r : trials_of(whole)) whole_keys.insert(r.trial_key);
  CHECK(keys == whole_keys);
}

TEST_CASE("sweep: --resume redoes a changed task's trials and a torn last line, keeps the rest") {
  TempDir dir;
  std::string tasks = copy_examples(dir);
  std::string out = dir.path() + "/run";
  auto first = forgectl_run({"run", tasks, "--agent", "oracle", "--trials", "2", "--concurrency", "2", "--out", out});
  REQUIRE_MESSAGE(first.code == 0, first.text());
  auto before = trials_of(out);
  REQUIRE(before.size() == 4);

  // The files task changes; a crash cut the last append short.
  std::ofstream(tasks + "/files-basic/fixtures/problem.txt", std::ios::app) << "\n(revised)\n";
  std::ofstream(out + "/trials.jsonl", std::ios::app) << R"({"task_id":"orders_db","trial_index":)";

  auto resumed = forgectl_run({"run", "--resume", "--out", out});
  REQUIRE_MESSAGE(resumed.code == 0, resumed.text());
  CHECK(resumed.err.find("2 result(s) of changed tasks set aside") != std::string::npos);
  CHECK(resumed.err.find("torn last line dropped") != std::string::npos);
  auto after = trials_of(out);
  REQUIRE(after.size() == 4);
  std::set<std::string> old_keys, new_keys;
  for (const auto& r : before) old_keys.insert(r.trial_key);
  for (const auto& r : after) {
    CAPTURE(r.task_id);
    CHECK(old_keys.count(r.trial_key) == (r.task_id == "orders_db" ? 1u : 0u));
  }
  CHECK(lines_of(out + "/trials.superseded.jsonl") == 2);
}

TEST_CASE("sweep: shards partition the matrix and merge back into the whole run") {
  TempDir dir;
  std::string tasks = copy_examples(dir);
  std::set<std::string> seen;
  std::vector<std::string> shard_dirs;
  std::size_t total = 0;
  for (int i = 0; i < 2; ++i) {
    std::string out = dir.path() + "/shard-" + std::to_string(i);
    auto r = forgectl_run({"run", tasks, "--agent", "oracle", "--trials", "3", "--concurrency", "2", "--shard",
                           std::to_string(i) + "/2", "--out", out});
    REQUIRE_MESSAGE(r.code == 0, r.text());
    for (const auto& t : trials_of(out)) {
      CHECK(seen.insert(t.trial_key).second);  // in exactly one shard
      ++total;
    }
    shard_dirs.push_back(out);
  }
  CHECK(total == 6);
  std::string merged = dir.path() + "/merged";
  std::vector<std::string> args{"merge", "--out", merged};
  args.insert(args.end(), shard_dirs.begin(), shard_dirs.end());
  auto m = forgectl_run(args);
  REQUIRE_MESSAGE(m.code == 0, m.text());
  CHECK(trials_of(merged).size() == 6);
  auto agg = json_file(merged + "/aggregate.json");
  CHECK(agg["overall"]["trials"].GetInt() == 6);
  CHECK(fs::exists(merged + "/report.html"));
}

TEST_CASE("sweep: two processes never share a run directory") {
  TempDir dir;
  std::string tasks = copy_examples(dir);
  std::string out = dir.path() + "/run";
  auto p = spawn_forgectl({"run", tasks, "--agent", "oracle", "--trials", "2", "--out", out});
  REQUIRE(p.has_value());
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(out + "/state.sqlite3") && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto second = forgectl_run({"run", "--resume", tasks, "--agent", "oracle", "--trials", "2", "--out", out});
  CHECK(second.code != 0);
  CAPTURE(second.err);
  CHECK(second.err.find("in use by") != std::string::npos);
  auto code = (*p)->wait_for(Millis(180000));
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  CHECK(lines_of(out + "/trials.jsonl") == 4);
}

TEST_CASE("sweep: --docker-host spreads trials over engines and records where each ran") {
  // Two addresses of this host's daemon: the scheduler treats them as two engines.
  TempDir dir;
  std::string tasks = copy_examples(dir);
  std::string alias = dir.path() + "/docker.sock";
  fs::create_symlink("/var/run/docker.sock", alias);
  std::string out = dir.path() + "/run";
  // Options before the tasks too: a repeatable option takes one value per occurrence.
  auto r =
      forgectl_run({"run", "--agent", "oracle", "--docker-host", "unix:///var/run/docker.sock", "--docker-host",
                    "unix://" + alias, tasks + "/files-basic", "--trials", "4", "--concurrency", "2", "--out", out});
  REQUIRE_MESSAGE(r.code == 0, r.text());
  std::map<std::string, int> per_engine;
  for (const auto& t : trials_of(out)) ++per_engine[t.docker_host];
  CHECK(per_engine.size() == 2);
  for (const auto& [engine, n] : per_engine) {
    CAPTURE(engine);
    CHECK(n >= 1);
  }
  CHECK(r.out.find("left on 2 engine(s)") != std::string::npos);
  auto runj = json_file(out + "/run.json");
  CHECK(runj["engines"].Size() == 2);

  auto bad = forgectl_run({"run", tasks, "--agent", "oracle", "--docker-host", "unix:///nonexistent/docker.sock",
                           "--out", dir.path() + "/bad"});
  CHECK(bad.code == 1);
  CHECK(bad.err.find("/nonexistent/docker.sock") != std::string::npos);
}

TEST_CASE("sweep: replay:FILE plays a recorded trajectory back to the same grade; a missing file is refused up front") {
  TempDir dir;
  std::string tasks = copy_examples(dir);
  std::string first = dir.path() + "/oracle", second = dir.path() + "/replay";
  auto r = forgectl_run({"run", tasks + "/orders-db", "--agent", "oracle", "--out", first});
  REQUIRE_MESSAGE(r.code == 0, r.text());
  std::string trajectory = first + "/trials/orders_db/0/trajectory.yaml";
  auto replayed = forgectl_run({"run", tasks + "/orders-db", "--agent", "replay:" + trajectory, "--out", second});
  REQUIRE_MESSAGE(replayed.code == 0, replayed.text());
  auto a = trials_of(first), b = trials_of(second);
  REQUIRE(a.size() == 1);
  REQUIRE(b.size() == 1);
  CHECK(b[0].agent == "replay");
  CHECK(b[0].binary_pass);
  CHECK(b[0].score == doctest::Approx(a[0].score));
  CHECK(b[0].tool_calls == a[0].tool_calls);

  auto missing =
      forgectl_run({"run", tasks, "--agent", "replay:" + dir.path() + "/nope.yaml", "--out", dir.path() + "/x"});
  CHECK(missing.code == 2);
  CHECK(missing.err.find("nope.yaml") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.path() + "/x"));
}

TEST_CASE("sweep: one run over two real Docker engines; the bare one gets forgectl's images first") {
  auto docker0 = [] {
    auto r = run_process({"ip", "link", "show", "docker0"});
    return r && r->exit_code == 0;
  };
  bool had_docker0 = docker0();
  {
    SecondEngine second;
    TempDir dir;
    fs::create_directories(dir.path() + "/tasks");
    copy_example_task("script-tests", dir.path() + "/tasks/script-tests");
    // script-tests runs in the runner alone (stack: none) and grades in a grader container: no
    // container-to-container traffic, which this host's first daemon's FORWARD policy would drop
    // for the second daemon's bridges (two engines on one host is a test set-up, not a deployment).
    std::string out = dir.path() + "/run";
    auto r =
        forgectl_run({"run", dir.path() + "/tasks", "--agent", "oracle", "--trials", "4", "--concurrency", "2",
                      "--docker-host", "unix:///var/run/docker.sock", "--docker-host", second.address(), "--out", out});
    REQUIRE_MESSAGE(r.code == 0, r.text());
    CHECK(r.err.find(second.address() + ": built forgectl/runner:local") != std::string::npos);
    std::map<std::string, int> per_engine;
    for (const auto& t : trials_of(out)) {
      CHECK(t.binary_pass);
      ++per_engine[t.docker_host];
    }
    CHECK(per_engine.size() == 2);
    CHECK(per_engine[second.address()] >= 1);
    CHECK(r.out.find("nothing of run") != std::string::npos);
  }
  // The second engine came and went without touching the first one's default bridge.
  CHECK(docker0() == had_docker0);
}

TEST_CASE("sweep: --executor local grades test scripts in a grader container from a copy of the host sandbox") {
  TempDir dir;
  fs::path tasks = fs::path(dir.path()) / "tasks";
  fs::create_directories(tasks);
  copy_example_task("script-tests", (tasks / "script-tests").string());
  std::string out = dir.path() + "/run";
  auto r = forgectl_run({"run", (tasks / "script-tests").string(), "--agent", "oracle", "--executor", "local",
                         "--trials", "2", "--out", out, "--progress", "plain"});
  REQUIRE_MESSAGE(r.code == 0, r.text());
  auto trials = trials_of(out);
  REQUIRE(trials.size() == 2);
  for (const auto& t : trials) {
    CHECK(t.binary_pass);
    CHECK(t.unconfined);
    CHECK(t.components.at("custom_checks") == 1.0);  // the hidden tests ran, in the grader, on the agent's files
  }
  CHECK(r.out.find("leak audit: nothing of run") != std::string::npos);
  CHECK(r.out.find("unconfined (host executor)") != std::string::npos);
  CHECK_FALSE(fs::exists(out + "/local"));
  auto runj = json_file(out + "/run.json");
  CHECK(std::string(runj["executor"].GetString()) == "local");
}

// --max-up-rate (docs/sweeps.md "Scheduling and admission"): stack creation paced, the trials over
// the rate waiting their turn in reserve — backpressure, every trial still graded.
TEST_CASE("sweep: --max-up-rate spaces stack creation; trials over the rate wait, none fails") {
  TempDir dir;
  const std::string task = copy_example_task("files-basic", dir.path() + "/files-basic");
  const std::string out = dir.path() + "/run";
  auto r = forgectl_run({"run", task, "--agent", "oracle", "--trials", "4", "--concurrency", "4", "--max-up-rate",
                         "0.5", "--out", out});
  REQUIRE_MESSAGE(r.code == 0, r.text());
  auto trials = trials_of(out);
  REQUIRE(trials.size() == 4);
  std::vector<double> waits;
  for (const auto& t : trials) {
    CHECK(t.outcome == results::Outcome::kGraded);
    double w = 0;
    for (const char* k : {"reserve", "ahead_reserve"})
      if (auto it = t.phases_s.find(k); it != t.phases_s.end()) w += it->second;
    waits.push_back(w);
  }
  std::sort(waits.begin(), waits.end());
  // Turns 2 s apart: the last of four waited about 6 s for its turn.
  CHECK(waits.back() >= 5.0);
  auto bad = forgectl_run({"run", task, "--agent", "oracle", "--max-up-rate", "fast", "--out", dir.path() + "/bad"});
  CHECK(bad.code != 0);
  CHECK_MESSAGE(bad.err.find("--max-up-rate 'fast'") != std::string::npos, bad.err);
}
