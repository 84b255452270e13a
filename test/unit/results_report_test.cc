// Reading trials.jsonl (older lines, duplicates, a torn last line), aggregate.json, report.html
// (self-contained, escaped) and the run directory's report files.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "core/json.h"
#include "results/aggregate.h"
#include "results/report_files.h"
#include "results/report_html.h"
#include "results/trial_record.h"

using namespace forge;
using namespace forge::results;

namespace {

std::string line(const std::string& task, int index, bool pass, const std::string& extra = "") {
  return R"({"task_id":")" + task + R"(","trial_index":)" + std::to_string(index) +
         R"(,"attempt":1,"agent":"oracle","binary_pass":)" + (pass ? "true" : "false") + R"(,"score":)" +
         (pass ? "1.0" : "0.0") +
         R"(,"components":{"state_checks":1.0},"termination_reason":"user_stop","outcome":"graded","error":null,)"
         R"("cost_usd":0.5,"tokens_input":10,"tokens_output":2,"turns":2,"tool_calls":2,"tool_errors":0,"duration_s":0.041,)"
         R"("phases_s":{"reserve":0.0,"agent":0.041,"down":0.318,"grade":0.003,"setup":0.001,"up":1.739},)"
         R"("started_at":"2026-11-30T09:02:16Z","finished_at":"2026-11-30T09:02:18Z")" +
         extra + "}\n";
}

std::string infra_line(const std::string& task, int index, const std::string& error) {
  return R"({"task_id":")" + task + R"(","trial_index":)" + std::to_string(index) +
         R"(,"agent":"oracle","binary_pass":false,"score":0.0,"termination_reason":"infra_error","outcome":"infra_error",)"
         R"("error":")" +
         error +
         R"(","cost_usd":0.0,"duration_s":0.0,"started_at":"2026-11-30T09:02:17Z",)"
         R"("finished_at":"2026-11-30T09:02:20Z"})"
         "\n";
}

std::vector<TrialRecord> parse_ok(const std::string& text) {
  auto log = parse_trials_jsonl(text, "run/trials.jsonl");
  REQUIRE_MESSAGE(log.has_value(), (log ? "" : log.error().what()));
  return log->trials;
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() / ("forgectl-report-" + std::to_string(rd()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path / name) << text; }
  std::string read(const std::string& name) const {
    std::ifstream in(path / name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

}  // namespace

TEST_CASE("trials.jsonl: every field read; older lines without trial_key, tool_errors, reserve are fine") {
  auto ts =
      parse_ok(line("orders_db", 0, true, R"(,"trial_key":"ab12","docker_host":"unix:///var/run/docker.sock")") +
               R"({"task_id":"old","trial_index":3,"agent":"oracle","outcome":"graded","binary_pass":true,"score":1,)"
               R"("phases_s":{"up":1.5}})"
               "\n");
  REQUIRE(ts.size() == 2);
  CHECK(ts[0].task_id == "orders_db");
  CHECK(ts[0].trial_key == "ab12");
  CHECK(ts[0].binary_pass);
  CHECK(ts[0].components.at("state_checks") == 1.0);
  CHECK(ts[0].phases_s.at("up") == doctest::Approx(1.739));
  CHECK(ts[0].error.empty());
  CHECK(ts[0].docker_host == "unix:///var/run/docker.sock");
  CHECK(ts[1].trial_index == 3);
  CHECK(ts[1].tool_errors == 0);
  CHECK(ts[1].phases_s.count("reserve") == 0);
  CHECK(ts[1].graded());
}

TEST_CASE("trials.jsonl: duplicates resolved, the later line wins") {
  auto ts = parse_ok(line("a", 0, false, R"(,"trial_key":"k1")") + line("a", 1, false) + line("b", 0, true) +
                     line("a", 0, true, R"(,"trial_key":"k1")") + line("a", 1, true));
  REQUIRE(ts.size() == 3);
  CHECK(ts[0].task_id == "b");
  CHECK(ts[1].trial_key == "k1");
  CHECK(ts[1].binary_pass);
  CHECK(ts[2].trial_index == 1);  // same task, agent and index without a key
  CHECK(ts[2].binary_pass);
}

TEST_CASE("trials.jsonl: a torn last line is skipped and counted; garbage elsewhere names the line") {
  std::string two = line("a", 0, true) + line("a", 1, true);
  auto torn = parse_trials_jsonl(two + R"({"task_id":"a","trial_in)", "run/trials.jsonl");
  REQUIRE(torn.has_value());
  CHECK(torn->trials.size() == 2);
  CHECK(torn->skipped_last_lines == 1);

  auto mid = parse_trials_jsonl(line("a", 0, true) + "{garbage\n" + line("a", 1, true), "run/trials.jsonl");
  REQUIRE(!mid.has_value());
  CHECK(mid.error().what().find("run/trials.jsonl:2") != std::string::npos);

  // Blank lines still count for the number, and are not "the last line".
  auto blank = parse_trials_jsonl("\n" + line("a", 0, true) + "nope\n" + line("a", 1, true) + "\n\n", "t.jsonl");
  REQUIRE(!blank.has_value());
  CHECK(blank.error().what().find("t.jsonl:3") != std::string::npos);

  // A last line that is JSON but not a trial is a bug to report, not a torn write.
  auto wrong = parse_trials_jsonl(line("a", 0, true) + R"({"task_id":"a"})", "t.jsonl");
  REQUIRE(!wrong.has_value());
  CHECK(wrong.error().what().find("t.jsonl:2") != std::string::npos);
  CHECK(wrong.error().what().find("agent") != std::string::npos);

  std::string maybe = line("a", 0, true);
  maybe.replace(maybe.find("\"graded\""), 8, "\"maybe\"");
  auto outcome = parse_trials_jsonl(maybe + line("a", 1, true), "t.jsonl");
  REQUIRE(!outcome.has_value());
  CHECK(outcome.error().what() == "t.jsonl:1: unknown outcome \"maybe\" (graded | infra_error | setup_error)");
}

TEST_CASE("aggregate.json: infra errors outside the denominators, reported with their messages") {
  auto ts = parse_ok(line("t1", 0, true) + line("t1", 1, false) + infra_line("t1", 2, "daemon: connection refused") +
                     infra_line("t2", 0, "daemon: connection refused"));
  auto text = aggregate_json(ts);
  REQUIRE(text.has_value());
  auto doc = json::parse(*text, "aggregate.json");
  REQUIRE(doc.has_value());
  const auto& o = (*doc)["overall"];
  CHECK(o["trials"].GetInt() == 4);
  CHECK(o["graded"].GetInt() == 2);
  CHECK(o["infra_errors"].GetInt() == 2);
  CHECK(o["pass_rate"].GetDouble() == doctest::Approx(0.5));
  CHECK(o["pass_at_k"]["1"].GetDouble() == doctest::Approx(0.5));
  CHECK(o["pass_at_k"]["2"].GetDouble() == doctest::Approx(1.0));
  CHECK(o["pass_hat_k"]["2"].GetDouble() == doctest::Approx(0.0));
  CHECK(o["pass_k_tasks"]["1"].GetInt() == 1);
  CHECK(o["score_ci95"].Size() == 2);
  CHECK(o["infra_error_messages"][0]["message"].GetString() == std::string("daemon: connection refused"));
  CHECK(o["infra_error_messages"][0]["count"].GetInt() == 2);
  CHECK(o["termination_reasons"]["infra_error"].GetInt() == 2);
  CHECK(o["cost_usd"].GetDouble() == doctest::Approx(1.0));
  // A task with only infra errors has no rate or score: null, not 0.
  const auto& t2 = (*doc)["by_task"]["t2"]["oracle"];
  CHECK(t2["pass_rate"].IsNull());
  CHECK(t2["mean_score"].IsNull());
  CHECK((*doc)["by_agent"]["oracle"]["graded"].GetInt() == 2);
}

TEST_CASE("aggregate.json: byte-identical across two calls") {
  auto ts = parse_ok(line("b", 0, true) + line("a", 0, false) + line("a", 1, true) + line("a", 2, true) +
                     infra_line("b", 1, "x"));
  auto first = aggregate_json(ts);
  auto second = aggregate_json(ts);
  REQUIRE(first.has_value());
  REQUIRE(second.has_value());
  CHECK(*first == *second);
  CHECK(first->find("\"a\"") < first->find("\"b\""));  // tasks in order
}

TEST_CASE("report.html: untrusted strings are escaped; no script, no URL") {
  std::string evil = R"(<script>alert(1)<\/script>)";
  auto ts = parse_ok(line(evil, 0, true) + line("plain", 0, false) +
                     infra_line("plain", 1, "GET http://evil.example/x: <b>refused</b>"));
  auto agg = aggregate_json(ts);
  REQUIRE(agg.has_value());
  std::string html =
      render_report_html(ts, *agg, R"({"run_id":"r-<1>","agent":"oracle","started_at":"2026-11-30T09:02:16Z"})");
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("&lt;script&gt;") != std::string::npos);
  CHECK(html.find("<b>refused") == std::string::npos);
  CHECK(html.find("://") == std::string::npos);  // even the error's URL is no longer one
  CHECK(html.find("r-&lt;1&gt;") != std::string::npos);
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("Timeline") != std::string::npos);
  CHECK(html.find("#9e9e9e") != std::string::npos);  // the infra trial is drawn in its colour
}

TEST_CASE("report.html: self-contained, no http anywhere, works without run.json") {
  auto ts = parse_ok(line("orders_db", 0, true) + line("orders_db", 1, false));
  auto agg = aggregate_json(ts);
  REQUIRE(agg.has_value());
  for (const std::string& run : {std::string(), std::string(R"({"run_id":"r1","agent":"oracle"})")}) {
    std::string html = render_report_html(ts, *agg, run);
    CHECK(html.find("http") == std::string::npos);
    CHECK(html.find(" src=") == std::string::npos);
    CHECK(html.find("<link") == std::string::npos);
    CHECK(html.find("@import") == std::string::npos);
    CHECK(html.find("orders_db") != std::string::npos);
    CHECK(html.find("50.0%") != std::string::npos);
  }
}

TEST_CASE("write_reports: aggregate.json and report.html in the run directory; missing paths named") {
  TempDir d;
  d.write("trials.jsonl", line("a", 0, true) + line("a", 1, false));
  d.write("run.json", R"({"run_id":"r-42","agent":"oracle"})");
  REQUIRE(write_reports(d.path.string()).has_value());
  CHECK(d.read("aggregate.json").find("\"pass_rate\": 0.5") != std::string::npos);
  CHECK(d.read("report.html").find("r-42") != std::string::npos);
  CHECK(!std::filesystem::exists(d.path / "report.html.tmp"));

  std::filesystem::remove(d.path / "trials.jsonl");
  auto no_trials = write_reports(d.path.string());
  REQUIRE(!no_trials.has_value());
  CHECK(no_trials.error().code == Errc::kNotFound);
  CHECK(no_trials.error().what().find("trials.jsonl") != std::string::npos);

  auto no_dir = write_reports((d.path / "nope").string());
  REQUIRE(!no_dir.has_value());
  CHECK(no_dir.error().what().find("nope") != std::string::npos);
}

TEST_CASE("summary_table: one line per task and a total") {
  auto ts =
      parse_ok(line("alpha", 0, true) + line("alpha", 1, false) + line("beta", 0, true) + infra_line("beta", 1, "x"));
  auto table = summary_table(ts);
  REQUIRE(table.has_value());
  CHECK(table->find("task") == 0);
  CHECK(table->find("alpha") != std::string::npos);
  CHECK(table->find("50%") != std::string::npos);
  CHECK(table->find("100%") != std::string::npos);
  std::string total = table->substr(table->find("total"));
  CHECK(total.find("     4      2    67%") != std::string::npos);  // 2 of 3 graded; the infra one is out
}

TEST_CASE("report.html: several agents get per-agent tables, no pooled Overall, and a matrix with full labels") {
  std::string other = line("t", 0, false);
  other.replace(other.find("\"oracle\""), 8, "\"noop\"");
  auto ts = parse_ok(line("t", 0, true) + other);
  auto agg = aggregate_json(ts);
  REQUIRE(agg.has_value());
  std::string html = render_report_html(ts, *agg, "");
  CHECK(html.find("Per agent") != std::string::npos);
  CHECK(html.find("<h2>Overall") == std::string::npos);  // never pooled over agents
  CHECK(html.find("Task × agent") != std::string::npos);
  CHECK(html.find("<th class=\"label\">noop</th>") != std::string::npos);
  std::string one = render_report_html(parse_ok(line("t", 0, true)), *aggregate_json(parse_ok(line("t", 0, true))), "");
  CHECK(one.find("Per agent") == std::string::npos);
}

TEST_CASE("report.html: the runtimes the sandboxes ran under, each with its trial count; none for older lines") {
  auto ts = parse_ok(line("t", 0, true, R"(,"runtime":"runsc")") + line("t", 1, true, R"(,"runtime":"runsc")") +
                     line("u", 0, false, R"(,"runtime":"runc")"));
  auto agg = aggregate_json(ts);
  REQUIRE(agg.has_value());
  std::string html = render_report_html(ts, *agg, "");
  CHECK_MESSAGE(html.find("runtime: <b>runc</b> (1 trial) <b>runsc</b> (2 trials)") != std::string::npos, html.substr(0, 3000));
  auto old = parse_ok(line("t", 0, true));
  CHECK(render_report_html(old, *aggregate_json(old), "").find("runtime:") == std::string::npos);
}
