// Writing aggregate.json, report.html and the trial pages into a run directory; the plain-text
// summary table.
#include "results/report_files.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "core/files.h"
#include "results/canary.h"
#include "results/compare.h"
#include "results/egress_view.h"
#include "results/html_text.h"
#include "results/metrics.h"
#include "results/report_html.h"
#include "results/run_json.h"
#include "results/tolokaforge_files.h"
#include "results/trial_detail.h"
#include "results/trial_page.h"
#include "results/validity.h"

namespace forge::results {

namespace fs = std::filesystem;

namespace {

Status check_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return fail(Errc::kNotFound, "run directory '" + dir + "' does not exist");
  return {};
}

// run.json is optional (a run killed before writing it, a directory of merged shards).
std::string read_run_json(const std::string& dir) {
  auto text = read_text(fs::path(dir) / "run.json");
  return text ? *text : std::string();
}

std::string cost_cell(const Summary& s) {
  if (s.cost_unknown > 0 && s.cost_unknown >= s.trials && s.cost_usd == 0) return "unknown";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%.4f", s.cost_unknown ? ">=" : "", s.cost_usd);
  return buf;
}

std::string format_line(const std::string& task, const std::string& agent, const Summary& s, std::size_t width,
                        std::size_t agent_width) {
  std::string rate = s.graded ? std::to_string(static_cast<int>(s.pass_rate * 100 + 0.5)) + "%" : "n/a";
  char score[32] = "n/a";
  if (s.graded) std::snprintf(score, sizeof score, "%.3f", s.score.mean);
  char buf[1024];
  std::snprintf(buf, sizeof buf, "%-*s  %-*s %6d %6d %6s %7s %6d %10s\n", static_cast<int>(width), task.c_str(),
                static_cast<int>(agent_width), agent.c_str(), s.trials, s.passed, rate.c_str(), score, s.infra_errors,
                cost_cell(s).c_str());
  return buf;
}

// Runs one part of the reports; an exception (memory, say) becomes its error instead of ending
// the others.
template <typename F>
Status guarded(const std::string& what, F&& part) {
  try {
    return part();
  } catch (const std::exception& e) {
    return fail(Errc::kIo, what + ": " + e.what());
  }
}

// One trial's page. A trial.json that cannot be read gets a page saying why (the record's facts
// and the reason), so one bad trial never costs the others their pages.
Status write_trial_page(const std::string& dir, const TrialRecord& t) {
  fs::path tdir = fs::path(dir) / t.trial_dir;
  std::error_code ec;
  if (!fs::is_directory(tdir, ec)) return {};  // a merge without the trial's directory
  auto detail = TrialDetail::read((tdir / "trial.json").string());
  std::string unreadable = detail || detail.error().code == Errc::kNotFound ? "" : detail.error().what();
  auto egress = read_egress_ledger(tdir.string());
  if (!egress && unreadable.empty()) unreadable = egress.error().what();
  const EgressLedger* ledger = egress && *egress ? &**egress : nullptr;
  return write_file_atomic((tdir / "trial.html").string(),
                           render_trial_page(t, detail ? &*detail : nullptr, unreadable, ledger));
}

// Pages of trials whose directory is a safe path under trials/ and exists: every one is tried;
// the first failure comes back after the rest are written.
Status write_trial_pages(const std::string& dir, const std::vector<TrialRecord>& trials) {
  Status first;
  for (const auto& t : trials) {
    if (!safe_trial_dir(t.trial_dir)) continue;
    Status st = guarded("the page of " + t.trial_dir, [&] { return write_trial_page(dir, t); });
    if (!st && first) first = st;
  }
  return first;
}

// Under the tables: each agent's egress tries (when some trial recorded a ledger), then the
// validity gate's verdict when the run is invalid.
std::string footer(const std::vector<TrialRecord>& trials, const AggregateOptions& options) {
  std::map<std::string, std::vector<const TrialRecord*>> by_agent;
  for (const auto& t : trials) by_agent[t.agent].push_back(&t);
  std::string out;
  for (const auto& [agent, g] : by_agent) {
    Summary s = summarize(g);
    if (!s.egress_recorded && !s.egress_failed) continue;
    out += "egress" + (by_agent.size() > 1 ? " " + agent : std::string()) + ": " + std::to_string(s.egress_tried) +
           " of " + std::to_string(s.egress_recorded) + " trial(s) with a ledger tried a blocked host; " +
           std::to_string(s.egress_failed) + " failed an egress rule\n";
  }
  RunValidity v = run_validity(trials, options.max_infra_rate.value_or(kDefaultMaxInfraRatePercent));
  if (!v.valid) out += "INVALID: " + v.reason + "; do not quote these results\n";
  return out;
}

// The agents' part of the summary table.
std::string agents_table(const std::vector<TrialRecord>& trials, const AggregateOptions& options) {
  std::map<std::pair<std::string, std::string>, std::vector<const TrialRecord*>> groups;
  std::map<std::string, std::vector<const TrialRecord*>> by_agent;
  for (const auto& t : trials) {
    groups[{t.task_id, t.agent}].push_back(&t);
    by_agent[t.agent].push_back(&t);
  }
  std::size_t width = 5, agent_width = 16;
  for (const auto& [key, g] : groups) {
    width = std::min<std::size_t>(std::max(width, key.first.size()), 48);
    agent_width = std::min<std::size_t>(std::max(agent_width, key.second.size()), 64);
  }
  char head[512];
  std::snprintf(head, sizeof head, "%-*s  %-*s %6s %6s %6s %7s %6s %10s\n", static_cast<int>(width), "task",
                static_cast<int>(agent_width), "agent", "trials", "passed", "rate", "score", "infra", "cost_usd");
  std::string out = head;
  for (const auto& [key, g] : groups) {
    std::string line = format_line(key.first, key.second, summarize(g), width, agent_width);
    if (std::any_of(g.begin(), g.end(), [](const TrialRecord* t) { return t->unconfined; }))
      line.insert(line.size() - 1, "  unconfined (host executor)");
    out += line;
  }
  if (by_agent.size() <= 1) {
    std::vector<const TrialRecord*> all;
    for (const auto& t : trials) all.push_back(&t);
    out += format_line("total", "", summarize(all), width, agent_width);
    return out;
  }
  for (const auto& [agent, g] : by_agent) out += format_line("total", agent, summarize(g), width, agent_width);
  for (const auto& c : compare_all(trials, options.compare)) out += c.sentence + "\n";
  return out;
}

}  // namespace

Status write_reports(const std::string& dir, const AggregateOptions& options) {
  if (auto st = check_dir(dir); !st) return st;
  auto log = read_trials_jsonl((fs::path(dir) / "trials.jsonl").string());
  if (!log) return log.fail();
  return write_reports(dir, log->trials, options);
}

double max_infra_rate_of(const std::string& dir) {
  auto run = RunJson::read((fs::path(dir) / "run.json").string());
  return run && run->max_infra_rate ? *run->max_infra_rate : kDefaultMaxInfraRatePercent;
}

Status write_reports(const std::string& dir, const std::vector<TrialRecord>& trials, const AggregateOptions& given) {
  if (auto st = check_dir(dir); !st) return st;
  AggregateOptions options = given;
  if (!options.max_infra_rate) options.max_infra_rate = max_infra_rate_of(dir);
  // Each file on its own: one that cannot be written never keeps the others from being written.
  std::vector<Error> failed;
  auto keep = [&](Status st) {
    if (!st) failed.push_back(st.error());
  };
  keep(write_trial_pages(dir, trials));
  std::string agg;
  keep(guarded("aggregate.json", [&]() -> Status {
    auto text = aggregate_json(trials, options);
    if (!text) return text.fail();
    agg = std::move(*text);
    return write_file_atomic((fs::path(dir) / "aggregate.json").string(), agg);
  }));
  // Tolokaforge's files know agents only: the canaries' results are aggregate.json's and report.html's.
  keep(guarded("Tolokaforge's files", [&] { return write_tolokaforge_files(dir, split_canaries(trials).agents); }));
  keep(guarded("report.html", [&] {
    return write_file_atomic((fs::path(dir) / "report.html").string(),
                             render_report_html(trials, agg.empty() ? "{}" : agg, read_run_json(dir)));
  }));
  if (failed.empty()) return {};
  std::string more = failed.size() > 1 ? " (and " + std::to_string(failed.size() - 1) + " more)" : "";
  return fail(failed.front().with_context("writing the reports of " + dir + more +
                                          "; the rest were written, and trials.jsonl is complete"));
}

Result<std::string> summary_table(const std::vector<TrialRecord>& records, const AggregateOptions& options) {
  SplitTrials split = split_canaries(records);
  // A run of canaries alone has no agents' table (its total line would be all zeros).
  std::string out = split.agents.empty() && !split.canaries.empty() ? "" : agents_table(split.agents, options);
  return out + canary_table(canary_report(split.canaries)) + footer(records, options);
}

}  // namespace forge::results