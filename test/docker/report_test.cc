// Two agents over example tasks through the forgectl binary against the real daemon: the paired
// comparison in aggregate.json, report.html and `forgectl show`, and one page per trial, linked
// from the report, holding its transcript and its grade's reasons; `forgectl report` re-renders
// the same bytes.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/json.h"
#include "results/html_text.h"
#include "results/trial_record.h"
#include "support/process.h"
#include "support/run_files.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

}  // namespace

TEST_CASE("report: oracle vs noop over example tasks — the paired comparison and a page per trial") {
  TempDir dir;
  fs::path tasks = fs::path(dir.path()) / "tasks";
  fs::create_directories(tasks);
  // The two example tasks whose stacks need no json-db: a test script and a web lookup.
  for (const char* t : {"script-tests", "web-lookup"}) copy_example_task(t, (tasks / t).string());
  std::string out = dir.path() + "/run";

  auto run = forgectl_run({"run", tasks.string(), "--agent", "oracle", "--agent", "noop", "--trials", "2",
                           "--concurrency", "2", "--out", out, "--progress", "plain"},
                          Millis(400000));
  REQUIRE_MESSAGE(run.code == 0, run.text());
  CHECK(run.out.find("oracle is better than noop by 100 points [100, 100] on 2 tasks") != std::string::npos);
  CHECK(run.out.find("total         noop") != std::string::npos);  // a total per agent, none pooled

  auto agg_text = slurp(fs::path(out) / "aggregate.json");
  auto agg = json::parse(agg_text, "aggregate.json");
  REQUIRE(agg.has_value());
  const auto& c = (*agg)["comparisons"][0];
  CHECK(std::string(c["a"].GetString()) == "noop");
  CHECK(std::string(c["b"].GetString()) == "oracle");
  CHECK(c["tasks"].GetInt() == 2);
  CHECK(c["pass_rate"]["diff"].GetDouble() == doctest::Approx(1.0));
  CHECK(std::string(c["verdict"].GetString()) == "b_better");
  CHECK(c["wins"]["b"].GetInt() == 2);

  std::string report = slurp(fs::path(out) / "report.html");
  CHECK(report.find("oracle is better than noop by 100 points") != std::string::npos);
  CHECK(report.find("<h2>Overall") == std::string::npos);
  auto log = results::read_trials_jsonl(out + "/trials.jsonl");
  REQUIRE(log.has_value());
  REQUIRE(log->trials.size() == 8);
  for (const auto& t : log->trials) {
    CAPTURE(t.trial_dir);
    CHECK(report.find("href=\"" + results::trial_href(t.trial_dir) + "\"") != std::string::npos);
    std::string page = slurp(fs::path(out) / t.trial_dir / "trial.html");
    REQUIRE(!page.empty());
    CHECK(page.find("<h2>Transcript</h2>") != std::string::npos);
    CHECK(page.find("class=\"msg system\"") != std::string::npos);  // the system prompt, whole
    CHECK(page.find("<h2>Grade</h2>") != std::string::npos);
    if (t.agent == "oracle") CHECK(page.find("PASS") != std::string::npos);
    CHECK(page.find("://") == std::string::npos);  // a URL in the transcript is text, not a link
    CHECK(fs::exists(fs::path(out) / t.trial_dir / "trial.json"));
  }
  CHECK(log->trials[0].category.size() > 0);  // the record carries what the task declares

  auto show = forgectl_run({"show", out}, Millis(400000));
  REQUIRE_MESSAGE(show.code == 0, show.text());
  CHECK(show.out.find("oracle is better than noop by 100 points") != std::string::npos);
  auto one = forgectl_run({"show", out, "script_tests", "0", "--agent", "oracle", "--json"}, Millis(400000));
  REQUIRE_MESSAGE(one.code == 0, one.text());
  auto d = json::parse(one.out, "show --json");
  REQUIRE(d.has_value());
  CHECK((*d)[0]["detail"]["messages"].Size() > 0);
  CHECK((*d)[0]["detail"]["grade"]["reasons"].Size() > 0);
  auto missing = forgectl_run({"show", out, "no_such_task"}, Millis(400000));
  CHECK(missing.code == 2);
  CHECK(missing.err.find("forgectl: error: no task 'no_such_task'") != std::string::npos);

  // Re-rendering from the directory gives the same bytes.
  auto again = forgectl_run({"report", out}, Millis(400000));
  REQUIRE_MESSAGE(again.code == 0, again.text());
  CHECK(slurp(fs::path(out) / "aggregate.json") == agg_text);
  CHECK(slurp(fs::path(out) / "report.html") == report);
}
