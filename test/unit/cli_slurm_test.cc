// forgectl slurm's parts that need no Slurm: the batch scripts, sbatch's job id, squeue's lines,
// a shard's progress from its run directory, and the image key that lets nodes agree on trial keys.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "cli/slurm_jobs.h"
#include "core/file_lock.h"
#include "core/strings.h"
#include "sweep/progress.h"
#include "sweep/trial_key.h"

using namespace forge;
using namespace forge::cli::slurm;
namespace fs = std::filesystem;

TEST_CASE("slurm submit: the array's script runs each shard with --shard auto --resume --build-images") {
  SubmitSpec spec{"/shared/bin/forgectl",
                  "/shared/sweeps/nightly",
                  3,
                  4,
                  {"/shared/tasks/a b", "--agent", "oracle", "--trials", "2", "--concurrency", "4"}};
  std::string s = shard_script(spec);
  CHECK(starts_with(s, "#!/bin/sh\n"));
  for (const char* line : {"#SBATCH --job-name=forgectl-nightly\n", "#SBATCH --array=0-2\n", "#SBATCH --requeue\n",
                           "#SBATCH --cpus-per-task=4\n", "#SBATCH --open-mode=append\n",
                           "#SBATCH --output=/shared/sweeps/nightly/slurm/logs/shard-%a.out\n"})
    CHECK_MESSAGE(s.find(line) != std::string::npos, line);
  CHECK(s.find("\nexec '/shared/bin/forgectl' 'run' '/shared/tasks/a b' '--agent' 'oracle' '--trials' '2' "
               "'--concurrency' '4' '--out' '/shared/sweeps/nightly' '--shard' 'auto' '--resume' '--build-images' "
               "'--progress' 'plain'\n") != std::string::npos);

  std::string m = merge_script(spec);
  CHECK(m.find("#SBATCH --job-name=forgectl-nightly-merge\n") != std::string::npos);
  CHECK(m.find("#SBATCH --output=/shared/sweeps/nightly/slurm/logs/merge.out\n") != std::string::npos);
  CHECK(m.find("\nexec '/shared/bin/forgectl' 'merge' '--out' '/shared/sweeps/nightly/merged' "
               "'/shared/sweeps/nightly/shards/0-of-3' '/shared/sweeps/nightly/shards/1-of-3' "
               "'/shared/sweeps/nightly/shards/2-of-3'\n") != std::string::npos);
  CHECK(shell_quote("it's") == "'it'\\''s'");
}

TEST_CASE("slurm submit: sbatch --parsable's job id, with or without a cluster name") {
  CHECK(parse_job_id("4242\n").value() == "4242");
  CHECK(parse_job_id("4242;west\n").value() == "4242");
  auto bad = parse_job_id("sbatch: error: invalid partition\n");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().what().find("not a job id") != std::string::npos);
  CHECK_FALSE(parse_job_id("").has_value());
}

TEST_CASE("slurm status: squeue's lines by job id; other lines skipped") {
  auto jobs = parse_squeue("12_0|RUNNING|None|node7\n12_1|PENDING|Resources|\n13|PENDING|Dependency|\ngarbage\n\n");
  REQUIRE(jobs.size() == 3);
  CHECK(jobs.at("12_0").state == "RUNNING");
  CHECK(jobs.at("12_0").node == "node7");
  CHECK(jobs.at("12_1").reason == "Resources");
  CHECK(jobs.at("13").reason == "Dependency");
}

TEST_CASE("slurm status: a shard's progress from its run directory, before and while it runs") {
  fs::path dir = fs::temp_directory_path() / ("forgectl-slurm-unit-" + random_hex(4));
  fs::create_directories(dir);
  auto none = read_shard(dir.string());
  REQUIRE(none.has_value());
  CHECK_FALSE(none->started);
  std::ofstream(dir / "run.json")
      << R"({"run_id":"r","status":"running","planned":3,"shard":"0/2","started_at":"2026-12-05T08:00:00Z"})";
  std::ofstream(dir / "trials.jsonl")
      << R"({"task_id":"t","trial_index":0,"agent":"oracle","binary_pass":true,"score":1,"outcome":"graded","cost_usd":0.5})"
         "\n"
      << R"({"task_id":"t","trial_index":1,"agent":"oracle","binary_pass":false,"score":0,"outcome":"infra_error","infra_kind":"daemon","error":"x"})"
         "\n";
  auto p = read_shard(dir.string());
  REQUIRE_MESSAGE(p.has_value(), (p ? "" : p.error().what()));
  CHECK(p->started);
  CHECK(p->status == "running");
  CHECK(p->planned == 3);
  CHECK(p->done == 2);
  CHECK(p->graded == 1);
  CHECK(p->passed == 1);
  CHECK(p->infra_errors == 1);
  CHECK(p->cost_usd == doctest::Approx(0.5));
  std::error_code ec;
  fs::remove_all(dir, ec);
  CHECK(sweep::totals_line({2, 3, 1, 1, 1, 0.5, false}, "—") == "[2/3] pass 100.0% (1/1) · infra 1 · $0.5000 · ETA —");
}

TEST_CASE("trial keys: forgectl's own images by their content, so nodes that each built them agree") {
  engine::ImageInfo built_here{
      "sha256:aaa", {}, {}, {{"io.forgectl.image", "runner"}, {"io.forgectl.content", "c0ffee"}}};
  engine::ImageInfo built_there{
      "sha256:bbb", {}, {}, {{"io.forgectl.image", "runner"}, {"io.forgectl.content", "c0ffee"}}};
  engine::ImageInfo loaded{"sha256:ccc", {}, {}, {}};
  CHECK(sweep::image_key(built_here) == "content:c0ffee");
  CHECK(sweep::image_key(built_here) == sweep::image_key(built_there));
  CHECK(sweep::image_key(loaded) == "sha256:ccc");
}

TEST_CASE("FileLock: a second holder waits; try_acquire says it is held") {
  fs::path path = fs::temp_directory_path() / ("forgectl-lock-" + random_hex(4)) / "images.lock";
  {
    auto first = FileLock::acquire(path.string());
    REQUIRE(first.has_value());
    auto second = FileLock::try_acquire(path.string());
    REQUIRE_FALSE(second.has_value());
    CHECK(second.error().code == Errc::kConflict);
  }
  CHECK(FileLock::try_acquire(path.string()).has_value());  // released with its holder
  std::error_code ec;
  fs::remove_all(path.parent_path(), ec);
}
