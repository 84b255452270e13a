// Tolokaforge's run-level files from trials.jsonl: exact metrics for a known pass pattern, infra
// errors and retried attempts counted as forgectl counts them, metadata slices, failure classes,
// and the files `forgectl report` regenerates.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "core/json.h"
#include "results/report_files.h"
#include "results/tolokaforge_files.h"
#include "results/tolokaforge_metrics.h"
#include "results/trial_detail.h"
#include "results/trial_record.h"

using namespace forge;
using namespace forge::results;

namespace {

std::string trial(const std::string& task, int index, bool pass, double seconds, const std::string& extra = "") {
  return R"({"task_id":")" + task + R"(","trial_index":)" + std::to_string(index) +
         R"(,"agent":"oracle","outcome":"graded","binary_pass":)" + (pass ? "true" : "false") + R"(,"score":)" +
         (pass ? "1.0" : "0.25") + R"(,"termination_reason":"agent_done","cost_usd":0.5,)" +
         R"("tokens_input":100,"tokens_output":10,"turns":4,"tool_calls":2,"duration_s":)" + std::to_string(seconds) +
         R"(,"trial_dir":"trials/)" + task + "/" + std::to_string(index) + "\"" + extra + "}\n";
}

std::string infra(const std::string& task, int index, const std::string& extra = "") {
  return R"({"task_id":")" + task + R"(","trial_index":)" + std::to_string(index) +
         R"(,"agent":"oracle","outcome":"infra_error","infra_kind":"daemon","error":"daemon down",)"
         R"("binary_pass":false,"score":0,"termination_reason":"infra_error","cost_usd":0.2,"duration_s":99)" +
         extra + "}\n";
}

const std::string kLabelsA =
    R"(,"category":"retail","difficulty":"easy","tags":["db","x"],"expected_failure_modes":["hallucination"])";
const std::string kLabelsB = R"(,"category":"airline","difficulty":"hard","tags":["db"])";

// Task a: pass, pass, fail in 1, 2, 4 s. Task b: pass, fail, fail in 10, 20, 30 s and one infra error.
std::string two_tasks() {
  return trial("a", 0, true, 1, kLabelsA) + trial("a", 1, true, 2, kLabelsA) + trial("a", 2, false, 4, kLabelsA) +
         trial("b", 0, true, 10, kLabelsB) + trial("b", 1, false, 20, kLabelsB) + trial("b", 2, false, 30, kLabelsB) +
         infra("b", 3, kLabelsB);
}

std::vector<TrialRecord> parse_ok(const std::string& text) {
  auto log = parse_trials_jsonl(text, "run/trials.jsonl");
  REQUIRE_MESSAGE(log.has_value(), (log ? "" : log.error().what()));
  return log->trials;
}

json::Document parse_json(const std::string& text) {
  json::Document d;
  REQUIRE_MESSAGE(!json::parse_document(d, text), text);
  return d;
}

std::vector<const TrialRecord*> ptrs(const std::vector<TrialRecord>& ts) {
  std::vector<const TrialRecord*> out;
  for (const auto& t : ts) out.push_back(&t);
  return out;
}

const json::Value& task_row(const json::Document& rows, const std::string& task) {
  for (const auto& r : rows.GetArray())
    if (json::get_string(r, "task_id") == task) return r;
  FAIL("no row for " << task);
  return rows;
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() / ("forgectl-tf-" + std::to_string(rd()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  void write(const std::string& name, const std::string& text) const {
    std::filesystem::create_directories((path / name).parent_path());
    std::ofstream(path / name) << text;
  }
  std::string read(const std::string& name) const {
    std::ifstream in(path / name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

}  // namespace

TEST_CASE("tolokaforge per_task_metrics.json: exact values over graded trials, the infra error outside") {
  auto ts = parse_ok(two_tasks());
  auto rows_json = tolokaforge::per_task_metrics_json(tolokaforge::task_metrics(ptrs(ts)));
  REQUIRE(rows_json.has_value());
  auto rows = parse_json(*rows_json);
  REQUIRE(rows.IsArray());
  REQUIRE(rows.Size() == 2);
  const auto& a = task_row(rows, "a");
  CHECK(json::get_int(a, "total_trials") == 3);
  CHECK(json::get_int(a, "successful_trials") == 2);
  CHECK(json::get_double(a, "success_rate") == doctest::Approx(2.0 / 3));
  CHECK(json::get_double(a, "pass@1") == doctest::Approx(2.0 / 3));
  CHECK(json::get_double(a, "pass_hat@1") == doctest::Approx(2.0 / 3));
  CHECK(a["pass@5"].IsNull());  // 5 trials cannot be drawn from 3
  CHECK(a["pass_hat@10"].IsNull());
  CHECK(json::get_double(a, "avg_score") == doctest::Approx(0.75));
  CHECK(json::get_double(a, "avg_latency_s") == doctest::Approx(7.0 / 3));
  CHECK(json::get_double(a, "latency_p50_s") == doctest::Approx(2.0));
  CHECK(json::get_double(a, "latency_p90_s") == doctest::Approx(3.6));  // 2 + 0.8 × (4 − 2)
  CHECK(json::get_double(a, "latency_p99_s") == doctest::Approx(3.96));
  CHECK(json::get_double(a, "avg_tokens_input") == doctest::Approx(100));
  CHECK(json::get_double(a, "total_cost_usd") == doctest::Approx(1.5));
  CHECK(json::get_double(a, "avg_cost_usd") == doctest::Approx(0.5));
  CHECK(json::get_double(a, "stuck_rate") == doctest::Approx(0));
  CHECK(json::get_string(a, "benchmark_type") == "retail");
  CHECK(json::get_string(a, "complexity") == "easy");
  CHECK(json::get_strings(a, "expected_failure_modes") == std::vector<std::string>{"hallucination"});

  const auto& b = task_row(rows, "b");
  CHECK(json::get_int(b, "total_trials") == 3);  // the infra error is not a trial of the model
  CHECK(json::get_int(b, "infra_errors") == 1);
  CHECK(json::get_double(b, "success_rate") == doctest::Approx(1.0 / 3));
  CHECK(json::get_double(b, "avg_latency_s") == doctest::Approx(20));  // its 99 s are not the model's
  CHECK(json::get_double(b, "total_cost_usd") == doctest::Approx(1.5));
}

TEST_CASE("tolokaforge aggregate.json: micro and macro rates, global percentiles, null pass@5") {
  auto ts = parse_ok(two_tasks());
  auto agg_json = tolokaforge::aggregate_json(tolokaforge::task_metrics(ptrs(ts)));
  REQUIRE(agg_json.has_value());
  auto agg = parse_json(*agg_json);
  CHECK(json::get_int(agg, "total_tasks") == 2);
  CHECK(json::get_int(agg, "total_trials") == 6);
  CHECK(json::get_int(agg, "infra_errors") == 1);
  CHECK(json::get_double(agg, "success_rate_micro") == doctest::Approx(0.5));
  CHECK(json::get_double(agg, "avg_score_micro") == doctest::Approx((1 + 1 + 0.25 + 1 + 0.25 + 0.25) / 6));
  CHECK(json::get_double(agg, "pass@1_macro") == doctest::Approx(0.5));
  CHECK(json::get_double(agg, "pass_hat@1_macro") == doctest::Approx(0.5));
  CHECK(agg["pass@5_macro"].IsNull());
  CHECK(agg["pass_hat@5_macro"].IsNull());
  CHECK(json::get_double(agg, "avg_latency_s") == doctest::Approx((7.0 / 3 + 20) / 2));
  CHECK(json::get_double(agg, "latency_p50_s") == doctest::Approx(7));  // of 1 2 4 10 20 30
  CHECK(json::get_double(agg, "latency_p50_s_macro") == doctest::Approx((2 + 20) / 2.0));
  CHECK(json::get_double(agg, "total_tokens_input") == doctest::Approx(600));
  CHECK(json::get_double(agg, "total_cost_usd") == doctest::Approx(3.0));
}

TEST_CASE("tolokaforge pass_hat@k is pass@k as in Tolokaforge; tau_pass_hat@k is the real pass^k") {
  std::string text;
  for (int i = 0; i < 5; ++i) text += trial("t", i, i < 3, 1);  // 3 of 5 pass
  auto ts = parse_ok(text);
  auto rows = parse_json(*tolokaforge::per_task_metrics_json(tolokaforge::task_metrics(ptrs(ts))));
  const auto& t = task_row(rows, "t");
  CHECK(json::get_double(t, "pass@5") == doctest::Approx(1.0));  // every draw of 5 holds a pass
  CHECK(json::get_double(t, "pass_hat@5") == doctest::Approx(1.0));
  CHECK(json::get_double(t, "tau_pass_hat@5") == doctest::Approx(0.0));  // 5 passes cannot be drawn from 3
  CHECK(json::get_double(t, "tau_pass_hat@1") == doctest::Approx(0.6));
  CHECK(t["pass@10"].IsNull());
}

TEST_CASE("tolokaforge: a trial retried after an infra error counts once, as its last attempt") {
  // Tolokaforge appends the failed attempt and the retry; trials.jsonl's later line replaces the earlier.
  std::string text = infra("r", 0, R"(,"trial_key":"k0")") + trial("r", 0, true, 3, R"(,"trial_key":"k0","attempt":2)");
  auto ts = parse_ok(text);
  auto agg = parse_json(*tolokaforge::aggregate_json(tolokaforge::task_metrics(ptrs(ts))));
  CHECK(json::get_int(agg, "total_trials") == 1);
  CHECK(json::get_int(agg, "infra_errors") == 0);
  CHECK(json::get_double(agg, "success_rate_micro") == doctest::Approx(1.0));
}

TEST_CASE("tolokaforge metadata_slices.json: by category, complexity, tag and expected failure mode") {
  auto ts = parse_ok(two_tasks() + trial("c", 0, true, 5));  // c declares nothing
  auto slices = parse_json(*tolokaforge::metadata_slices_json(tolokaforge::task_metrics(ptrs(ts))));
  const auto& type = slices["by_benchmark_type"];
  CHECK(json::get_int(type["retail"], "total_trials") == 3);
  CHECK(json::get_double(type["airline"], "success_rate_micro") == doctest::Approx(1.0 / 3));
  CHECK(json::get_int(type["unknown"], "total_tasks") == 1);
  CHECK(json::get_double(slices["by_complexity"]["easy"], "pass@1_macro") == doctest::Approx(2.0 / 3));
  CHECK(json::get_int(slices["by_complexity"]["unspecified"], "total_trials") == 1);
  CHECK(json::get_int(slices["by_tag"]["db"], "total_tasks") == 2);
  CHECK(json::get_double(slices["by_tag"]["db"], "success_rate_micro") == doctest::Approx(0.5));
  CHECK(json::get_int(slices["by_tag"]["x"], "total_tasks") == 1);
  CHECK(json::get_int(slices["by_expected_failure_mode"]["hallucination"], "total_trials") == 3);
  CHECK_FALSE(slices["by_tag"]["db"].HasMember("latency_p50_s"));  // the run's own percentiles only
}

TEST_CASE("tolokaforge files in the run directory: failure classes from trial.json, rewritten the same") {
  TempDir d;
  std::string text = trial("a", 0, true, 1) + trial("a", 1, false, 1) + trial("a", 2, false, 1) +
                     trial("a", 3, false, 1) + infra("a", 4) +
                     trial("a", 5, false, 1).replace(trial("a", 5, false, 1).find("agent_done"), 10, "timeout");
  d.write("trials.jsonl", text);
  TrialDetail bad_call;  // a: 1 — a tool refused its arguments
  bad_call.task_id = "a";
  bad_call.trial_index = 1;
  bad_call.tool_log = {
      {"assistant", "db_query", "{}", "ok", "rows", "", 0.1, false},
      {"assistant", "db_update", "{\"x\":1}", "failed", "", "invalid arguments: x is not a column", 0.1, false}};
  d.write("trials/a/1/trial.json", bad_call.to_json());
  TrialDetail diff;  // a: 2 — golden replay's state differed
  diff.task_id = "a";
  diff.trial_index = 2;
  diff.state_diff_json = R"({"tables":{"orders":{}},"summary":"State mismatch"})";
  diff.reasons = {"state_checks: FAIL hash mismatch"};
  d.write("trials/a/2/trial.json", diff.to_json());
  // a: 3 has no trial.json and no tool errors: the model's reasoning, not deterministic.

  REQUIRE(write_reports(d.path.string()).has_value());
  auto fa = parse_json(d.read("tolokaforge/failure_attribution.json"));
  const auto& summary = fa["summary"];
  CHECK(json::get_int(summary, "total_failed_attempts") == 4);
  CHECK(json::get_double(summary, "deterministic_attribution_coverage") == doctest::Approx(0.75));
  CHECK(json::get_int(summary["by_failure_class"], "tool_arguments") == 1);
  CHECK(json::get_int(summary["by_failure_class"], "grader_contract") == 1);
  CHECK(json::get_int(summary["by_failure_class"], "timeout_or_resource") == 1);
  CHECK(json::get_int(summary["by_failure_class"], "model_reasoning") == 1);
  CHECK(json::get_int(summary["by_tool"], "db_update") == 1);
  CHECK(json::get_int(summary, "infra_errors") == 1);
  CHECK(json::get_int(summary["infra_errors_by_kind"], "daemon") == 1);
  const auto& failures = fa["failures"];
  REQUIRE(failures.Size() == 4);
  const auto& first = failures[0];
  CHECK(json::get_int(first, "trial_index") == 1);
  CHECK(json::get_string(first, "failure_class") == "tool_arguments");
  CHECK(json::get_double(first, "confidence") == doctest::Approx(1.0));
  CHECK(json::get_string(first["evidence"][0], "tool") == "db_update");
  CHECK(json::get_int(first["evidence"][0], "index") == 1);
  CHECK(json::get_strings(failures[1]["evidence"][0], "keys") == std::vector<std::string>{"summary", "tables"});
  CHECK(json::get_string(failures[2], "failure_class") == "model_reasoning");
  CHECK(json::get_double(failures[2], "confidence") == doctest::Approx(0.5));
  CHECK(json::get_string(failures[3], "status") == "timeout");

  for (const char* f : {"aggregate.json", "per_task_metrics.json", "metadata_slices.json"})
    CHECK_MESSAGE(std::filesystem::exists(d.path / "tolokaforge" / f), f);
  std::string before = d.read("tolokaforge/aggregate.json") + d.read("tolokaforge/failure_attribution.json");
  REQUIRE(write_reports(d.path.string()).has_value());  // forgectl report, --resume and merge all end here
  CHECK(d.read("tolokaforge/aggregate.json") + d.read("tolokaforge/failure_attribution.json") == before);
}

TEST_CASE("tolokaforge failure attribution: the agent's words \"Connection refused\" never make a failure infrastructure") {
  TempDir d;
  d.write("trials.jsonl", trial("a", 0, false, 1) + trial("a", 1, false, 1) + infra("a", 2));
  TrialDetail said;  // a: 0 — the agent (and a tool's output) claim an outage
  said.task_id = "a";
  said.trial_index = 0;
  said.messages = {{"assistant", "I could not finish: ECONNREFUSED (Connection refused) net::ERR_CONNECTION_REFUSED", ""},
                   {"tool", "curl: (7) Failed to connect: Connection refused", ""}};
  said.tool_log = {{"assistant", "bash", "{}", "ok", "curl: (7) Failed to connect: Connection refused", "", 0.1, false}};
  d.write("trials/a/0/trial.json", said.to_json());
  TrialDetail honest;  // a: 1 — the control: no such words, the same class
  honest.task_id = "a";
  honest.trial_index = 1;
  honest.messages = {{"assistant", "I could not finish.", ""}};
  d.write("trials/a/1/trial.json", honest.to_json());

  REQUIRE(write_reports(d.path.string()).has_value());
  auto fa = parse_json(d.read("tolokaforge/failure_attribution.json"));
  const auto& summary = fa["summary"];
  CHECK(json::get_int(summary, "total_failed_attempts") == 2);
  CHECK_FALSE(summary["by_failure_class"].HasMember("infrastructure"));
  CHECK(json::get_int(summary["by_failure_class"], "model_reasoning") == 2);
  CHECK(json::get_double(summary, "deterministic_attribution_coverage") == doctest::Approx(0.0));
  CHECK(json::get_int(summary, "infra_errors") == 1);  // forgectl's own infra outcome, counted apart
  const auto& failures = fa["failures"];
  REQUIRE(failures.Size() == 2);
  for (const auto& f : failures.GetArray()) {
    CHECK(json::get_string(f, "failure_class") == "model_reasoning");
    CHECK_FALSE(f["deterministic"].GetBool());
    CHECK(json::get_double(f, "confidence") == doctest::Approx(0.5));
  }
  // The words are kept as evidence, counted, and nothing more.
  CHECK(json::get_string(failures[0]["evidence"][0], "kind") == "connection_errors");
  CHECK(json::get_int(failures[0]["evidence"][0], "count") == 2);
}

TEST_CASE("tolokaforge files of a run of several agents: one directory per agent, none pooling them") {
  TempDir d;
  std::string b = trial("a", 0, false, 1);
  b.replace(b.find("\"oracle\""), 8, "\"llm:openai/gpt-4o\"");
  d.write("trials.jsonl", trial("a", 0, true, 1) + b);
  d.write("tolokaforge/aggregate.json", "{}\n");  // left by an earlier run of one agent
  REQUIRE(write_reports(d.path.string()).has_value());
  auto oracle = parse_json(d.read("tolokaforge/oracle/aggregate.json"));
  auto llm = parse_json(d.read("tolokaforge/llm-openai-gpt-4o/aggregate.json"));
  CHECK(json::get_double(oracle, "success_rate_micro") == doctest::Approx(1.0));
  CHECK(json::get_double(llm, "success_rate_micro") == doctest::Approx(0.0));
  CHECK_FALSE(std::filesystem::exists(d.path / "tolokaforge" / "aggregate.json"));
}
