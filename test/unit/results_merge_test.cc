// forgectl merge: shards into one run directory, duplicates resolved, and the refusals that keep
// results from being mixed up or overwritten.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "core/json.h"
#include "results/merge.h"
#include "results/run_json.h"

using namespace forge;
using namespace forge::results;
namespace fs = std::filesystem;

namespace {

// A trials.jsonl line; `spacing` varies the bytes to show lines are copied as they are.
std::string line(const std::string& task, int index, bool pass, const std::string& finished = "2026-11-30T09:02:18Z",
                 const std::string& outcome = "graded", const std::string& spacing = "") {
  return R"({"task_id":")" + task + R"(",)" + spacing + R"("trial_index":)" + std::to_string(index) +
         R"(,"agent":"oracle","binary_pass":)" + (pass ? "true" : "false") + R"(,"score":)" + (pass ? "1.0" : "0.0") +
         R"(,"outcome":")" + outcome + R"(","error":)" + (outcome == "graded" ? "null" : "\"daemon down\"") +
         R"(,"cost_usd":0.25,"started_at":"2026-11-30T09:02:16Z","finished_at":")" + finished + "\"}";
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::random_device rd;
    path = fs::temp_directory_path() / ("forgectl-merge-" + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& rel) const { return (path / rel).string(); }
};

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A run directory: run.json, trials.jsonl from `lines`, and a trial directory per line whose
// task/index are given in `dirs` ("task/idx"), each with a grade.yaml naming the run.
void make_run(const fs::path& dir, const std::string& run_id, const std::string& config_hash,
              const std::vector<std::string>& lines, const std::vector<std::string>& dirs) {
  fs::create_directories(dir);
  std::string run = R"({"run_id":")" + run_id + R"(","status":"completed","agent":"oracle")";
  if (!config_hash.empty()) run += R"(,"config_hash":")" + config_hash + "\"";
  write(dir / "run.json", run + R"(,"shard":")" + run_id + "\"}\n");
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  write(dir / "trials.jsonl", text);
  for (const auto& d : dirs) write(dir / "trials" / d / "grade.yaml", "from: " + run_id + "\n");
}

}  // namespace

TEST_CASE("merge: two shards give their union, sorted, lines byte for byte, dirs copied, reports written") {
  TempDir tmp;
  std::string odd = line("b_task", 1, true, "2026-11-30T09:02:18Z", "graded", " ");  // a space: copied as is
  make_run(tmp.path / "s0", "0/2", "h1", {line("c_task", 0, true), odd}, {"c_task/0", "b_task/1"});
  make_run(tmp.path / "s1", "1/2", "h1", {line("a_task", 0, false), line("b_task", 0, true)}, {"a_task/0"});

  auto r = merge_runs({tmp / "s0", tmp / "s1"}, tmp / "all");
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  CHECK(r->trials.size() == 4);
  CHECK(r->duplicates == 0);
  REQUIRE(r->sources.size() == 2);
  CHECK(r->sources[0].shard == "0/2");
  CHECK(r->sources[1].trials == 2);
  CHECK(read(tmp.path / "all" / "trials.jsonl") ==
        line("a_task", 0, false) + "\n" + line("b_task", 0, true) + "\n" + odd + "\n" + line("c_task", 0, true) + "\n");
  CHECK(read(tmp.path / "all" / "trials" / "c_task" / "0" / "grade.yaml") == "from: 0/2\n");
  CHECK(read(tmp.path / "all" / "trials" / "a_task" / "0" / "grade.yaml") == "from: 1/2\n");
  REQUIRE(r->missing_dirs.size() == 1);  // b_task/0 has a record but no directory: a warning only
  CHECK(r->missing_dirs[0].find("b_task/0") != std::string::npos);

  auto agg = json::parse(read(tmp.path / "all" / "aggregate.json"), "aggregate.json");
  REQUIRE(agg.has_value());
  CHECK(json::get_int(*json::get_object(*agg, "overall"), "trials") == 4);
  CHECK(json::get_int(*json::get_object(*agg, "overall"), "passed") == 3);
  CHECK(fs::exists(tmp.path / "all" / "report.html"));

  auto run = json::parse(read(tmp.path / "all" / "run.json"), "run.json");
  REQUIRE(run.has_value());
  CHECK(json::get_string(*run, "status") == "merged");
  CHECK(json::get_string(*run, "config_hash") == "h1");
  const json::Value* from = json::get_array(*run, "merged_from");
  REQUIRE(from);
  REQUIRE(from->Size() == 2);
  CHECK(json::get_string((*from)[1], "run_id") == "1/2");
  CHECK(json::get_string((*from)[1], "shard") == "1/2");
  CHECK(json::get_string((*from)[0], "path") == fs::absolute(tmp.path / "s0").lexically_normal().string());
}

TEST_CASE("merge: a trial in two runs keeps the graded record over an infra error, else the later one") {
  TempDir tmp;
  make_run(tmp.path / "a", "a", "",
           {line("t", 0, true, "2026-11-30T10:00:00Z"), line("t", 1, false, "2026-11-30T09:00:00Z", "infra_error"),
            line("t", 2, false, "2026-11-30T09:00:00Z")},
           {"t/0", "t/1", "t/2"});
  make_run(tmp.path / "b", "b", "",
           {line("t", 0, false, "2026-11-30T11:00:00Z", "infra_error"), line("t", 1, true, "2026-11-30T08:00:00Z"),
            line("t", 2, true, "2026-11-30T12:00:00Z")},
           {"t/0", "t/1", "t/2"});
  auto r = merge_runs({tmp / "a", tmp / "b"}, tmp / "out");
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  CHECK(r->duplicates == 3);
  REQUIRE(r->trials.size() == 3);
  CHECK(r->trials[0].graded());  // graded (earlier) beats a later infra error
  CHECK(r->trials[0].binary_pass);
  CHECK(r->trials[1].graded());  // graded beats infra error, whichever run it is in
  CHECK(r->trials[1].finished_at == "2026-11-30T08:00:00Z");
  CHECK(r->trials[2].binary_pass);  // both graded: the later one
  // Each kept trial's directory comes from the run whose record was kept.
  CHECK(read(tmp.path / "out" / "trials" / "t" / "0" / "grade.yaml") == "from: a\n");
  CHECK(read(tmp.path / "out" / "trials" / "t" / "1" / "grade.yaml") == "from: b\n");
  CHECK(read(tmp.path / "out" / "trials" / "t" / "2" / "grade.yaml") == "from: b\n");
  CHECK(r->warnings.empty());
}

TEST_CASE("merge: runs with different config_hash are refused unless forced") {
  TempDir tmp;
  make_run(tmp.path / "a", "a", "aaa111", {line("t", 0, true)}, {});
  make_run(tmp.path / "b", "b", "bbb222", {line("t", 1, true)}, {});
  auto r = merge_runs({tmp / "a", tmp / "b"}, tmp / "out");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == Errc::kInvalid);
  CHECK(r.error().what() == "shards of different runs: " + tmp / "a/run.json" + " config_hash aaa111, " +
                                tmp / "b/run.json" + " bbb222 (--force merges them anyway)");
  CHECK_FALSE(fs::exists(tmp.path / "out"));  // nothing written

  auto forced = merge_runs({tmp / "a", tmp / "b"}, tmp / "out", MergeOptions{.force = true});
  REQUIRE_MESSAGE(forced.has_value(), (forced ? "" : forced.error().what()));
  CHECK(forced->trials.size() == 2);
  REQUIRE(forced->warnings.size() == 1);
  CHECK(forced->warnings[0].find("--force") != std::string::npos);
}

TEST_CASE("merge: never writes over results") {
  TempDir tmp;
  make_run(tmp.path / "a", "a", "", {line("t", 0, true)}, {"t/0"});
  SUBCASE("an existing non-empty --out is refused and left alone") {
    write(tmp.path / "out" / "keep.txt", "mine");
    auto r = merge_runs({tmp / "a"}, tmp / "out");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::kConflict);
    CHECK(r.error().what().find("is not empty") != std::string::npos);
    CHECK(read(tmp.path / "out" / "keep.txt") == "mine");
    CHECK_FALSE(fs::exists(tmp.path / "out" / "trials.jsonl"));
  }
  SUBCASE("an existing empty --out is fine") {
    fs::create_directories(tmp.path / "out");
    CHECK(merge_runs({tmp / "a"}, tmp / "out").has_value());
  }
  SUBCASE("--out that is a source is refused, however it is spelled") {
    auto r = merge_runs({tmp / "a"}, tmp.path.string() + "/./a/");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::kInvalid);
    CHECK(r.error().what().find("is also a source") != std::string::npos);
    CHECK(read(tmp.path / "a" / "trials.jsonl") == line("t", 0, true) + "\n");
  }
}

TEST_CASE("merge: a source without trials.jsonl is an error naming it") {
  TempDir tmp;
  make_run(tmp.path / "a", "a", "", {line("t", 0, true)}, {});
  fs::create_directories(tmp.path / "b");
  auto r = merge_runs({tmp / "a", tmp / "b"}, tmp / "out");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == Errc::kNotFound);
  CHECK(r.error().what().find(tmp / "b/trials.jsonl") != std::string::npos);
  CHECK_FALSE(fs::exists(tmp.path / "out"));

  auto missing = merge_runs({tmp / "a", tmp / "nope"}, tmp / "out");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().what().find(tmp / "nope") != std::string::npos);
}

TEST_CASE("merge: the same trial position with different trial_key keeps both, with a warning") {
  TempDir tmp;
  auto keyed = [](const std::string& key) {
    std::string l = line("t", 0, true);
    return l.substr(0, l.size() - 1) + R"(,"trial_key":")" + key + "\"}";
  };
  make_run(tmp.path / "a", "a", "", {keyed("k1")}, {});
  make_run(tmp.path / "b", "b", "", {keyed("k2")}, {});
  auto r = merge_runs({tmp / "a", tmp / "b"}, tmp / "out");
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  CHECK(r->duplicates == 0);
  CHECK(r->trials.size() == 2);
  REQUIRE(r->warnings.size() == 1);
  CHECK(r->warnings[0].find("different trial_key") != std::string::npos);
}

TEST_CASE("run.json: the invocation keeps --env-passthrough names and --harbor-verifier for --resume") {
  RunJson r;
  r.run_id = "abc123";
  r.status = "running";
  r.invocation.task_paths = {"/tasks/a"};
  r.invocation.agents = {"oracle"};
  r.invocation.env_passthrough = {"HF_TOKEN", "PIP_INDEX_URL"};
  r.invocation.harbor_verifier = "shared";
  const std::string text = r.to_json();
  auto back = RunJson::parse(text, "run.json");
  REQUIRE(back.has_value());
  CHECK(back->invocation.env_passthrough == std::vector<std::string>{"HF_TOKEN", "PIP_INDEX_URL"});
  CHECK(back->invocation.harbor_verifier == "shared");
  // Names only: the file never holds a value (none is given to it, and none is looked up).
  CHECK(text.find("\"env_passthrough\":[\"HF_TOKEN\",\"PIP_INDEX_URL\"]") != std::string::npos);
  // An older run.json without them resumes as it ran: no variables, the separate verifier.
  auto old = RunJson::parse(R"({"run_id":"x","status":"running","invocation":{"task_paths":["/t"]}})", "old.json");
  REQUIRE(old.has_value());
  CHECK(old->invocation.env_passthrough.empty());
  CHECK(old->invocation.harbor_verifier.empty());
  RunJson sep;
  auto sep_back = RunJson::parse(sep.to_json(), "run.json");
  REQUIRE(sep_back.has_value());
  CHECK(sep_back->invocation.harbor_verifier == "separate");
}

namespace {

// A shard's run directory as `forgectl run --shard i/N` leaves it: run.json with its status and
// plan, and trials.jsonl (absent before its first trial).
void make_shard(const fs::path& dir, const std::string& shard, const std::string& status, int planned,
                const std::vector<std::string>& lines) {
  fs::create_directories(dir);
  write(dir / "run.json", R"({"run_id":"r)" + shard.substr(0, 1) + R"(","status":")" + status +
                              R"(","agents":["oracle"],"config_hash":"c1","planned":)" + std::to_string(planned) +
                              R"(,"shard":")" + shard + "\"}\n");
  if (lines.empty()) return;
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  write(dir / "trials.jsonl", text);
}

}  // namespace

TEST_CASE("merge: names every shard that is missing or unfinished instead of a smaller run") {
  TempDir tmp;
  make_shard(tmp.path / "s0", "0/3", "completed", 1, {line("t", 0, true)});
  make_shard(tmp.path / "s1", "1/3", "interrupted", 2, {line("t", 1, true)});
  // Shard 2/3 never started: its directory does not exist.
  auto r = merge_runs({tmp / "s0", tmp / "s1", tmp / "s2"}, tmp / "out");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == Errc::kNotFound);
  CHECK(
      r.error().what() ==
      "3 run(s) or shard(s) missing or unfinished; the merge would be smaller than the run (finish them with forgectl "
      "run --resume, or merge what there is with --partial):\n  " +
          tmp / "s2" + ": does not exist\n  " + tmp / "s1" +
          " (shard 1/3): interrupted, 1 of 2 trial(s) recorded\n  shard 2/3: none of the run directories given holds "
          "it");
  CHECK_FALSE(fs::exists(tmp.path / "out"));

  // A shard that started and recorded nothing yet is unfinished too, not a stranger.
  make_shard(tmp.path / "s2", "2/3", "running", 3, {});
  auto running = merge_runs({tmp / "s0", tmp / "s1", tmp / "s2"}, tmp / "out");
  REQUIRE_FALSE(running.has_value());
  CHECK(running.error().code == Errc::kConflict);
  CHECK(running.error().what().find(tmp / "s2" + " (shard 2/3): running, 0 of 3 trial(s) recorded") !=
        std::string::npos);

  auto partial = merge_runs({tmp / "s0", tmp / "s1", tmp / "s2"}, tmp / "out", MergeOptions{.partial = true});
  REQUIRE_MESSAGE(partial.has_value(), (partial ? "" : partial.error().what()));
  CHECK(partial->trials.size() == 2);
  CHECK(partial->warnings.size() == 2);
  for (const auto& w : partial->warnings) CHECK(w.find("(merged without it: --partial)") != std::string::npos);
}

TEST_CASE("merge: every shard of the split, finished, merges without a word") {
  TempDir tmp;
  make_shard(tmp.path / "s0", "0/2", "completed", 1, {line("t", 0, true)});
  make_shard(tmp.path / "s1", "1/2", "completed", 1, {line("t", 1, true)});
  auto r = merge_runs({tmp / "s1", tmp / "s0"}, tmp / "out");
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  CHECK(r->trials.size() == 2);
  CHECK(r->warnings.empty());

  make_shard(tmp.path / "other", "0/3", "completed", 1, {line("u", 0, true)});
  auto mixed = merge_runs({tmp / "s0", tmp / "other"}, tmp / "out2");
  REQUIRE_FALSE(mixed.has_value());
  CHECK(mixed.error().what().find("shards of different splits") != std::string::npos);
}
