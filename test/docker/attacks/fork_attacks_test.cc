// A hostile agent beside an honest control, both forked from set-up snapshots (docs/sweeps.md
// "Forks"): the hostile one plants files in the workspace and /tmp, tampers with what setup wrote
// and deletes a set-up directory in every trial; each next trial must start from the snapshot
// untouched — its check finds no plant, its starting workspace hashes like the first trial's.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>

#include "results/trial_record.h"
#include "support/fork_task.h"
#include "support/process.h"
#include "support/run_files.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

TEST_CASE("fork attacks: what a hostile agent plants never reaches the next forked trial; the honest control alike") {
  TempDir dir;
  const fs::path tasks = fs::path(dir.path()) / "tasks";
  write_fork_task(tasks / "hostile", 1, "", true);
  write_fork_task(tasks / "honest", 1, "", false);
  const std::string out = dir.path() + "/run";
  auto r = forgectl_run({"run", tasks.string(), "--agent", "oracle", "--trials", "3", "--concurrency", "1", "--out", out});
  REQUIRE_MESSAGE(r.code == 0, r.text());
  auto trials = trials_of(out);
  REQUIRE(trials.size() == 6);
  std::map<std::string, std::set<std::string>> hashes;
  std::map<std::string, int> forked;
  for (const auto& t : trials) {
    CAPTURE(t.task_id);
    CAPTURE(t.trial_index);
    CHECK(t.score == doctest::Approx(1.0));  // status.txt CLEAN: no plant, setup.txt and made/ as set up
    CHECK_FALSE(t.workspace_sha256.empty());
    hashes[t.task_id].insert(t.workspace_sha256);
    forked[t.task_id] += t.snapshot_source == "forked";
  }
  for (const char* id : {"hostile", "honest"}) {
    CAPTURE(id);
    CHECK(hashes[id].size() == 1);
    CHECK(forked[id] == 2);
  }
  CHECK(hashes["hostile"] != hashes["honest"]);  // each task its own snapshot
}
