// The run validity gate (infra errors against --max-infra-rate) as aggregate.json, the summary
// table, report.html, run.json, `merge` and the flag show it; run.json's per-phase networks; the
// sweep's egress counts per task and agent.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "cli/app.h"
#include "core/files.h"
#include "core/json.h"
#include "core/strings.h"
#include "results/aggregate.h"
#include "results/merge.h"
#include "results/report_files.h"
#include "results/report_html.h"
#include "results/run_json.h"
#include "results/validity.h"
#include "support/manifest_helpers.h"

using namespace forge;
using namespace forge::results;
namespace fs = std::filesystem;

namespace {

TrialRecord graded(const std::string& task, const std::string& agent, int idx, bool pass) {
  TrialRecord r;
  r.task_id = task;
  r.agent = agent;
  r.trial_index = idx;
  r.trial_key = task + "/" + agent + "/" + std::to_string(idx);
  r.binary_pass = pass;
  r.score = pass ? 1 : 0;
  r.components = {{"state_checks", r.score}};
  r.started_at = "2026-11-30T09:02:16Z";
  r.finished_at = "2026-11-30T09:02:18Z";
  return r;
}

TrialRecord infra(const std::string& task, const std::string& agent, int idx) {
  TrialRecord r = graded(task, agent, idx, false);
  r.outcome = Outcome::kInfraError;
  r.infra_kind = InfraKind::kDaemon;
  r.error = "docker: connection reset";
  return r;
}

// `n` trials of one agent, the first `bad` of them infra errors.
std::vector<TrialRecord> run_of(int n, int bad, const std::string& agent = "oracle") {
  std::vector<TrialRecord> out;
  for (int i = 0; i < n; ++i) out.push_back(i < bad ? infra("t", agent, i) : graded("t", agent, i, true));
  return out;
}

std::string jsonl(const std::vector<TrialRecord>& trials) {
  std::string out;
  for (const auto& t : trials) out += to_json_line(t) + "\n";
  return out;
}

}  // namespace

TEST_CASE("validity: exactly at the threshold is valid, above it is not, no trials is valid") {
  CHECK(run_validity(run_of(100, 5), 5).valid);  // 5.0 % is not more than 5 %
  RunValidity above = run_validity(run_of(100, 7), 5);
  CHECK_FALSE(above.valid);
  CHECK(above.reason == "infra errors 7 of 100 trials (7.0 %) exceed --max-infra-rate 5 %");
  CHECK(above.max_infra_rate == 5);
  CHECK(run_validity(run_of(100, 7), 7).valid);
  CHECK_FALSE(run_validity(run_of(3, 1), 33.3).valid);  // 33.33… %
  CHECK(run_validity({}, 5).valid);
  CHECK(run_validity({}, 0).valid);
  CHECK_FALSE(run_validity(run_of(1000, 1), 0).valid);  // 0 %: any infra error makes it invalid
  CHECK(run_validity(run_of(10, 10), 100).valid);

  // One agent degraded in a run of several: 4 of 20 of its trials, 4 of 60 in all (6.7 %).
  std::vector<TrialRecord> mixed = run_of(20, 4, "llm:flaky");
  for (const char* a : {"llm:a", "llm:b"})
    for (auto& t : run_of(20, 0, a)) mixed.push_back(t);
  RunValidity per_agent = run_validity(mixed, 10);
  CHECK_FALSE(per_agent.valid);
  CHECK(per_agent.reason == "agent llm:flaky: infra errors 4 of 20 trials (20.0 %) exceed --max-infra-rate 10 %");
}

TEST_CASE("validity: a percentage as the flag and the run config write it") {
  CHECK(*parse_percent("5") == 5);
  CHECK(*parse_percent("2.5%") == 2.5);
  CHECK(*parse_percent(" 7 % ") == 7);
  CHECK(*parse_percent("0") == 0);
  CHECK(*parse_percent("100") == 100);
  for (const char* bad : {"", "%", "abc", "-1", "101", "1e1", "5%%", "inf", "nan", "0x5", ".", "1.2.3", "+5"})
    CHECK_MESSAGE(!parse_percent(bad), bad);
}

TEST_CASE("validity: run --max-infra-rate with a bad value is a usage error naming the argument") {
  std::ostringstream out, err;
  cli::Context ctx(out, err, HostSettings::defaults());
  cli::App app(ctx);
  forge::test::TempFiles t("forgectl-infra-rate-");
  std::vector<const char*> args = {"forgectl", "run",   "nothing-here",     "--agent", "oracle",
                                   "--out",    nullptr, "--max-infra-rate", "abc"};
  std::string dir = t.file("run");
  args[6] = dir.c_str();
  int rc = app.run(static_cast<int>(args.size()), args.data(), out, err);
  CHECK(rc == 2);
  CHECK(err.str().find("--max-infra-rate 'abc': give a percentage between 0 and 100 (5, 2.5 or 5%)") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir + "/trials.jsonl"));
}

TEST_CASE("validity: aggregate.json, the summary table and report.html mark an invalid run") {
  auto trials = run_of(20, 2);
  AggregateOptions o;
  o.max_infra_rate = 5;
  auto agg = aggregate_json(trials, o);
  REQUIRE(agg);
  auto doc = json::parse(*agg, "aggregate.json");
  REQUIRE(doc);
  CHECK_FALSE(json::get_bool(*doc, "valid", true));
  CHECK(json::get_string(*doc, "invalid_reason") == "infra errors 2 of 20 trials (10.0 %) exceed --max-infra-rate 5 %");
  CHECK(json::get_double(*doc, "max_infra_rate") == 5);
  auto table = summary_table(trials, o);
  REQUIRE(table);
  CHECK(table->find("INVALID: infra errors 2 of 20 trials (10.0 %) exceed --max-infra-rate 5 %; do not quote these "
                    "results\n") != std::string::npos);
  std::string html = render_report_html(trials, *agg, "{}");
  CHECK(html.find("<b>INVALID RUN:</b> infra errors 2 of 20 trials (10.0 %) exceed --max-infra-rate 5 %") !=
        std::string::npos);

  o.max_infra_rate = 10;
  auto ok = aggregate_json(trials, o);
  REQUIRE(ok);
  auto ok_doc = json::parse(*ok, "aggregate.json");
  REQUIRE(ok_doc);
  CHECK(json::get_bool(*ok_doc, "valid", false));
  CHECK(json::has_null(*ok_doc, "invalid_reason"));
  CHECK(summary_table(trials, o)->find("INVALID") == std::string::npos);
  CHECK(render_report_html(trials, *ok, "{}").find("INVALID RUN") == std::string::npos);
}

TEST_CASE("validity: report takes the run's threshold from run.json; merge judges the whole against the strictest") {
  forge::test::TempFiles t("forgectl-validity-");
  // Two shards: one clean (0 of 10), one degraded (3 of 10): 15 % of the whole.
  auto write_shard = [&](const std::string& name, int bad, double rate, int first) {
    std::vector<TrialRecord> trials;
    for (int i = 0; i < 10; ++i)
      trials.push_back(i < bad ? infra("t", "oracle", first + i) : graded("t", "oracle", first + i, true));
    t.write(name + "/trials.jsonl", jsonl(trials));
    RunJson r;
    r.run_id = name;
    r.status = "completed";
    r.config_hash = "same";
    r.max_infra_rate = rate;
    r.networks["t"] =
        TaskNetworks{{"limited_internet", {"api.test"}}, {"limited_internet", {"api.test"}}, {"none", {}}};
    t.write(name + "/run.json", r.to_json());
    return t.file(name);
  };
  std::string a = write_shard("a", 0, 20, 0), b = write_shard("b", 3, 10, 10);
  REQUIRE(write_reports(b));  // 30 % of b's own trials, over its 10 %
  auto b_agg = json::parse(*read_text(b + "/aggregate.json"), "aggregate.json");
  REQUIRE(b_agg);
  CHECK_FALSE(json::get_bool(*b_agg, "valid", true));
  CHECK(max_infra_rate_of(b) == 10);
  CHECK(max_infra_rate_of(t.file("nowhere")) == kDefaultMaxInfraRatePercent);

  std::string out = t.file("merged");
  auto merged = merge_runs({a, b}, out, {});
  REQUIRE_MESSAGE(merged, (merged ? "" : merged.error().what()));
  auto run = RunJson::read(out + "/run.json");
  REQUIRE(run);
  REQUIRE(run->max_infra_rate);
  CHECK(*run->max_infra_rate == 10);  // the strictest shard's
  REQUIRE(run->summary);
  CHECK_FALSE(run->summary->valid);
  CHECK(run->summary->invalid_reason == "infra errors 3 of 20 trials (15.0 %) exceed --max-infra-rate 10 %");
  REQUIRE(run->networks.count("t"));
  CHECK(run->networks.at("t").agent.policy == "limited_internet");
  CHECK(run->networks.at("t").agent.allowlist == std::vector<std::string>{"api.test"});
  CHECK(run->networks.at("t").grade.policy == "none");
  auto agg = json::parse(*read_text(out + "/aggregate.json"), "aggregate.json");
  REQUIRE(agg);
  CHECK_FALSE(json::get_bool(*agg, "valid", true));
  CHECK(json::get_string(*agg, "invalid_reason") ==
        "infra errors 3 of 20 trials (15.0 %) exceed --max-infra-rate 10 %");
}

TEST_CASE("run.json: the validity verdict, the threshold and each phase's network read back as written") {
  RunJson r;
  r.run_id = "r1";
  r.status = "completed";
  r.max_infra_rate = 2.5;
  r.invocation.max_infra_rate = 2.5;
  r.networks["web"] = TaskNetworks{
      {"limited_internet", {".example.org"}}, {"limited_internet", {".example.org"}}, {"full_internet", {}}};
  r.networks["local"] = TaskNetworks{{"host", {}}, {"host", {}}, {"none", {}}};
  RunSummaryJson s;
  s.finished = 10;
  s.infra_errors = 1;
  s.valid = false;
  s.invalid_reason = "infra errors 1 of 10 trials (10.0 %) exceed --max-infra-rate 2.5 %";
  r.summary = s;
  auto back = RunJson::parse(r.to_json(), "run.json");
  REQUIRE(back);
  CHECK(*back->max_infra_rate == 2.5);
  CHECK(*back->invocation.max_infra_rate == 2.5);
  CHECK(back->networks.at("web").setup.allowlist == std::vector<std::string>{".example.org"});
  CHECK(back->networks.at("web").grade.policy == "full_internet");
  CHECK(back->networks.at("local").agent.policy == "host");
  CHECK_FALSE(back->summary->valid);
  CHECK(back->summary->invalid_reason == s.invalid_reason);
  // An older run.json: no threshold, valid.
  auto old = RunJson::parse(R"({"run_id":"o","status":"completed","summary":{"planned":1,"finished":1}})", "run.json");
  REQUIRE(old);
  CHECK_FALSE(old->max_infra_rate);
  CHECK(old->summary->valid);
  CHECK(old->networks.empty());
}

TEST_CASE("egress counts: per task and agent, trials that tried a blocked host and trials an egress rule failed") {
  std::vector<TrialRecord> trials;
  for (int i = 0; i < 4; ++i) {
    TrialRecord r = graded("fetch", "oracle", i, i != 0);
    r.egress_recorded = true;
    r.egress_entries = 10;
    r.egress_blocked = i < 2 ? 3 : 0;  // trials 0 and 1 tried
    if (i == 0)
      r.components["egress"] = 0;
    else
      r.components["egress"] = 1;
    trials.push_back(r);
  }
  trials.push_back(graded("plain", "oracle", 0, true));  // no ledger
  // Through trials.jsonl and back: the counts survive the line.
  auto log = parse_trials_jsonl(jsonl(trials), "trials.jsonl");
  REQUIRE(log);
  CHECK(log->trials[1].egress_recorded);
  CHECK(log->trials[1].egress_blocked == 3);
  CHECK_FALSE(log->trials[4].egress_recorded);
  auto agg = aggregate_json(log->trials);
  REQUIRE(agg);
  auto doc = json::parse(*agg, "aggregate.json");
  REQUIRE(doc);
  const auto* fetch = json::get_object(*json::get_object(*json::get_object(*doc, "by_task"), "fetch"), "oracle");
  REQUIRE(fetch);
  const auto* e = json::get_object(*fetch, "egress");
  REQUIRE(e);
  CHECK(json::get_int(*e, "trials_with_ledger") == 4);
  CHECK(json::get_int(*e, "tried_blocked") == 2);
  CHECK(json::get_int(*e, "failed_rules") == 1);
  const auto* plain = json::get_object(*json::get_object(*json::get_object(*doc, "by_task"), "plain"), "oracle");
  REQUIRE(plain);
  CHECK_FALSE(json::get_object(*plain, "egress"));
  auto table = summary_table(log->trials);
  REQUIRE(table);
  CHECK(table->find("egress: 2 of 4 trial(s) with a ledger tried a blocked host; 1 failed an egress rule\n") !=
        std::string::npos);
  CHECK(render_report_html(log->trials, *agg, "{}").find("<h2>Egress</h2>") != std::string::npos);
}
