// The trial pages (every trial linked from report.html, holding its transcript and its grade's
// reasons), escaping of every string in both pages, forgectl show's text and JSON, slices, and
// unknown costs.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "core/json.h"
#include "results/aggregate.h"
#include "results/html_text.h"
#include "results/report_files.h"
#include "results/report_html.h"
#include "results/show.h"
#include "results/trial_detail.h"

using namespace forge;
using namespace forge::results;
namespace fs = std::filesystem;

namespace {

struct RunFixture {
  fs::path dir;
  RunFixture() {
    std::random_device rd;
    dir = fs::temp_directory_path() / ("forgectl-pages-" + std::to_string(rd()));
    fs::create_directories(dir);
  }
  ~RunFixture() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string read(const fs::path& rel) const {
    std::ifstream in(dir / rel);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // One trial: its record in trials.jsonl and its trial.json.
  void add(TrialRecord r, const TrialDetail* d) {
    std::ofstream(dir / "trials.jsonl", std::ios::app) << to_json_line(r) << '\n';
    fs::create_directories(dir / r.trial_dir);
    if (d) std::ofstream(dir / r.trial_dir / "trial.json") << d->to_json();
  }
};

TrialRecord record(const std::string& task, const std::string& agent, int idx, bool pass, const std::string& rel) {
  TrialRecord r;
  r.task_id = task;
  r.agent = agent;
  r.trial_index = idx;
  r.binary_pass = pass;
  r.score = pass ? 1 : 0;
  r.termination_reason = "agent_done";
  r.turns = 2;
  r.tool_calls = 1;
  r.cost_usd = 0.25;
  r.started_at = "2026-11-30T09:02:16Z";
  r.finished_at = "2026-11-30T09:02:19Z";
  r.phases_s = {{"reserve", 0.1}, {"up", 1.5}, {"setup", 0.2}, {"agent", 0.8}, {"grade", 0.1}, {"down", 0.3}};
  r.trial_dir = rel;
  r.category = "retail";
  r.tags = {"orders", "db"};
  r.difficulty = "easy";
  return r;
}

TrialDetail detail(const TrialRecord& r, const std::string& answer) {
  TrialDetail d;
  d.task_id = r.task_id;
  d.agent = r.agent;
  d.trial_index = r.trial_index;
  d.trial_dir = r.trial_dir;
  d.outcome = "graded";
  d.termination_reason = r.termination_reason;
  d.messages = {{"system", "You are a shop assistant.", "", {}, "", ""},
                {"user", "Cancel order 7.", "", {}, "", ""},
                {"assistant", "", "", {{"call_1", "db_update", R"({"table":"orders","id":7})"}}, "", ""},
                {"tool", "{\"ok\":true}", "", {}, "call_1", "db_update"},
                {"assistant", answer, "", {}, "", ""}};
  d.tool_log = {{"assistant", "db_update", R"({"table":"orders","id":7})", "ok", "{\"ok\":true}", "", 0.012, false}};
  d.binary_pass = r.binary_pass;
  d.score = r.score;
  d.components = {{"state_checks", r.score}};
  d.reasons = {"state_checks: PASS orders[7].status == \"cancelled\"", "transcript_rules: FAIL must_contain \"done\""};
  d.state_diff_json = R"({"orders":{"7":{"status":["open","cancelled"]}}})";
  return d;
}

}  // namespace

TEST_CASE("trial pages: every trial has one, linked from report.html, with its transcript and its grade's reasons") {
  RunFixture run;
  auto a = record("orders-db", "llm:fast", 0, true, "trials/orders-db/llm-fast/0");
  auto b = record("orders-db", "noop", 0, false, "trials/orders-db/noop/0");
  auto da = detail(a, "Order 7 is cancelled.");
  run.add(a, &da);
  run.add(b, nullptr);  // an older run's trial without trial.json still gets a page
  REQUIRE(write_reports(run.dir.string()).has_value());
  std::string report = run.read("report.html");
  CHECK(report.find("href=\"trials&#47;orders-db&#47;llm-fast&#47;0&#47;trial.html\"") != std::string::npos);
  CHECK(report.find("href=\"trials&#47;orders-db&#47;noop&#47;0&#47;trial.html\"") != std::string::npos);
  std::string page = run.read("trials/orders-db/llm-fast/0/trial.html");
  CHECK(page.find("You are a shop assistant.") != std::string::npos);
  CHECK(page.find("Order 7 is cancelled.") != std::string::npos);
  CHECK(page.find("db_update") != std::string::npos);
  CHECK(page.find("&quot;table&quot;: &quot;orders&quot;") != std::string::npos);  // arguments, indented
  CHECK(page.find("state_checks: PASS orders[7].status") != std::string::npos);
  CHECK(page.find("transcript_rules: FAIL must_contain") != std::string::npos);
  CHECK(page.find("State diff") != std::string::npos);
  CHECK(page.find("href=\"..&#47;..&#47;..&#47;..&#47;report.html\"") != std::string::npos);  // back, relatively
  CHECK(page.find("http") == std::string::npos);
  std::string old = run.read("trials/orders-db/noop/0/trial.html");
  CHECK(old.find("no trial.json") != std::string::npos);
  CHECK(old.find("agent_done") != std::string::npos);
}

TEST_CASE("pages: every string escaped — task ids, agent labels, transcript content, reasons") {
  RunFixture run;
  const std::string evil_task = "<script>alert('t')</script>";
  const std::string evil_agent = "llm:<img src=x onerror=alert(1)>";
  auto r = record(evil_task, evil_agent, 0, true, "trials/x/0");
  r.error = "<b>boom</b>";
  auto d = detail(r, "<script>document.location='//evil'</script>");
  d.reasons.push_back("llm_judge: <iframe>");
  d.messages[0].content = "</pre><script>x</script>";
  run.add(r, &d);
  REQUIRE(write_reports(run.dir.string()).has_value());
  for (const char* f : {"report.html", "trials/x/0/trial.html"}) {
    std::string html = run.read(f);
    CAPTURE(f);
    CHECK(html.find("<script") == std::string::npos);
    CHECK(html.find("<img") == std::string::npos);
    CHECK(html.find("<iframe") == std::string::npos);
    CHECK(html.find("<b>boom") == std::string::npos);
    CHECK(html.find("&lt;script&gt;") != std::string::npos);
    CHECK(html.find("://") == std::string::npos);
  }
}

TEST_CASE("pages: a trial_dir outside trials/ gets no page and no link") {
  CHECK(safe_trial_dir("trials/a/0"));
  CHECK(!safe_trial_dir("trials/../../etc"));
  CHECK(!safe_trial_dir("/etc/passwd"));
  CHECK(!safe_trial_dir("trials//0"));
  CHECK(!safe_trial_dir("trials/a\\b"));
  CHECK(trial_href("trials/a b#c/0") == "trials&#47;a%20b%23c&#47;0&#47;trial.html");
  RunFixture run;
  auto r = record("t", "oracle", 0, true, "trials/../escape");
  std::ofstream(run.dir / "trials.jsonl") << to_json_line(r) << '\n';
  REQUIRE(write_reports(run.dir.string()).has_value());
  CHECK(!fs::exists(run.dir.parent_path() / "escape" / "trial.html"));
  CHECK(run.read("report.html").find("escape") == std::string::npos);
}

TEST_CASE("report.html: slices by category, tag and difficulty; cost unknown is not $0") {
  auto a = record("t1", "llm:x", 0, true, "trials/t1/0");
  a.cost_known = false;
  a.cost_usd = 0;
  auto b = record("t2", "llm:x", 0, false, "trials/t2/0");
  b.category = "travel";
  b.tags = {"db"};
  b.cost_known = false;
  b.cost_usd = 0;
  std::vector<TrialRecord> ts{a, b};
  auto agg = aggregate_json(ts);
  REQUIRE(agg.has_value());
  auto d = json::parse(*agg, "aggregate.json");
  CHECK((*d)["by_slice"]["category"]["retail"]["llm:x"]["passed"].GetInt() == 1);
  CHECK((*d)["by_slice"]["tag"]["db"]["llm:x"]["graded"].GetInt() == 2);
  CHECK((*d)["by_slice"]["difficulty"]["easy"]["llm:x"]["graded"].GetInt() == 2);
  CHECK((*d)["overall"]["cost_known"].IsFalse());
  CHECK((*d)["overall"]["cost_per_pass_usd"].IsNull());
  std::string html = render_report_html(ts, *agg, "");
  CHECK(html.find("cost unknown") != std::string::npos);
  CHECK(html.find("$0.0000") == std::string::npos);
  CHECK(html.find("<h3>category</h3>") != std::string::npos);
  CHECK(html.find("travel") != std::string::npos);
  // The line round-trips the new fields; older lines read as known cost and no labels.
  auto back = parse_trial_line(to_json_line(b), "x");
  REQUIRE(back.has_value());
  CHECK(!back->cost_known);
  CHECK(back->category == "travel");
  CHECK(back->tags == std::vector<std::string>{"db"});
  auto old = parse_trial_line(R"({"task_id":"t","agent":"a","outcome":"graded"})", "x");
  CHECK(old->cost_known);
  CHECK(old->tags.empty());
}

TEST_CASE("forgectl show: the run per agent with the comparison, a task's trials, a trial, and --json") {
  RunFixture run;
  for (int t = 0; t < 4; ++t) {
    std::string task = "task" + std::to_string(t);
    auto a = record(task, "llm:a", 0, false, "trials/" + task + "/llm-a/0");
    auto b = record(task, "llm:b", 0, true, "trials/" + task + "/llm-b/0");
    auto db = detail(b, "Done \x1b[31mred\x1b[0m.");
    run.add(a, nullptr);
    run.add(b, &db);
  }
  ShowRequest r;
  r.dir = run.dir.string();
  auto summary = show(r);
  REQUIRE_MESSAGE(summary.has_value(), (summary ? "" : summary.error().what()));
  CHECK(summary->find("llm:a: 0/4 graded passed (0.0%)") != std::string::npos);
  CHECK(summary->find("llm:b: 4/4 graded passed (100.0%)") != std::string::npos);
  CHECK(summary->find("llm:b is better than llm:a by 100 points [100, 100] on 4 tasks") != std::string::npos);

  r.task = "task1";
  auto task = show(r);
  REQUIRE(task.has_value());
  CHECK(task->find("task task1: 2 trial(s)") != std::string::npos);
  CHECK(task->find("llm:b #0  pass score 1.000") != std::string::npos);
  CHECK(task->find("trials/task1/llm-b/0") != std::string::npos);

  r.index = 0;
  r.agent = "llm:b";
  auto trial = show(r);
  REQUIRE(trial.has_value());
  CHECK(trial->find("transcript:") != std::string::npos);
  CHECK(trial->find("Cancel order 7.") != std::string::npos);
  CHECK(trial->find("state_checks: PASS") != std::string::npos);
  CHECK(trial->find('\x1b') == std::string::npos);  // an escape sequence from the model is shown, not sent
  CHECK(trial->find("\\x1b[31m") != std::string::npos);

  r.json = true;
  auto tj = show(r);
  REQUIRE(tj.has_value());
  auto d = json::parse(*tj, "show");
  REQUIRE(d.has_value());
  REQUIRE(d->IsArray());
  CHECK(std::string((*d)[0]["record"]["agent"].GetString()) == "llm:b");
  CHECK(std::string((*d)[0]["detail"]["messages"][1]["content"].GetString()) == "Cancel order 7.");

  ShowRequest rj;
  rj.dir = run.dir.string();
  rj.json = true;
  auto sj = show(rj);
  REQUIRE(sj.has_value());
  auto sd = json::parse(*sj, "show");
  REQUIRE(sd.has_value());
  CHECK((*sd)["agents"]["llm:b"]["passed"].GetInt() == 4);
  CHECK(std::string((*sd)["comparisons"][0]["verdict"].GetString()) == "b_better");

  ShowRequest bad;
  bad.dir = run.dir.string();
  bad.task = "nope";
  auto missing = show(bad);
  REQUIRE(!missing.has_value());
  CHECK(missing.error().what().find("no task 'nope'") != std::string::npos);
  CHECK(missing.error().what().find("task0") != std::string::npos);
}

// docs/sweeps.md "Forks": a trial's line round-trips its snapshot, and show says whether the
// trials of one snapshot started identical.
TEST_CASE("forgectl show: a forked trial names its snapshot and how many of its trials started identical") {
  RunFixture run;
  for (int i = 0; i < 3; ++i) {
    auto t = record("forked", "oracle", i, true, "trials/forked/" + std::to_string(i));
    t.snapshot_source = i == 0 ? "taken" : "forked";
    t.snapshot_image = "sha256:aa";
    t.workspace_sha256 = i == 2 ? "ff" : "ee";
    auto back = parse_trial_line(to_json_line(t), "test");
    REQUIRE(back.has_value());
    CHECK(back->snapshot_source == t.snapshot_source);
    CHECK(back->snapshot_image == "sha256:aa");
    CHECK(back->workspace_sha256 == t.workspace_sha256);
    run.add(t, nullptr);
  }
  ShowRequest r;
  r.dir = run.dir.string();
  r.task = "forked";
  r.index = 1;
  r.agent = "oracle";
  auto one = show(r);
  REQUIRE(one.has_value());
  CHECK(one->find("setup: forked from sha256:aa") != std::string::npos);
  CHECK(one->find("starting workspace sha256 ee: 2 of the 3 trial(s) of this snapshot started identical") !=
        std::string::npos);
}
