// Writing aggregate.json, report.html and the trial pages into a run directory; the plain-text
// summary table.
#include "results/report_files.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "core/files.h"
#include "results/compare.h"
#include "results/html_text.h"
#include "results/metrics.h"
#include "results/report_html.h"
#include "results/tolokaforge_files.h"
#include "results/trial_detail.h"
#include "results/trial_page.h"

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

// Pages of trials whose directory is a safe path under trials/ and exists.
Status write_trial_pages(const std::string& dir, const std::vector<TrialRecord>& trials) {
  for (const auto& t : trials) {
    if (!safe_trial_dir(t.trial_dir)) continue;
    fs::path tdir = fs::path(dir) / t.trial_dir;
    std::error_code ec;
    if (!fs::is_directory(tdir, ec)) continue;  // a merge without the trial's directory
    auto detail = TrialDetail::read((tdir / "trial.json").string());
    if (!detail && detail.error().code != Errc::kNotFound) return detail.fail_with("the page of " + t.trial_dir);
    std::string html = render_trial_page(t, detail ? &*detail : nullptr);
    if (auto st = write_file_atomic((tdir / "trial.html").string(), html); !st) return st;
  }
  return {};
}

}  // namespace

Status write_reports(const std::string& dir, const AggregateOptions& options) {
  if (auto st = check_dir(dir); !st) return st;
  auto log = read_trials_jsonl((fs::path(dir) / "trials.jsonl").string());
  if (!log) return log.fail();
  return write_reports(dir, log->trials, options);
}

Status write_reports(const std::string& dir, const std::vector<TrialRecord>& trials, const AggregateOptions& options) {
  if (auto st = check_dir(dir); !st) return st;
  auto agg = aggregate_json(trials, options);
  if (!agg) return agg.fail_with("writing the reports of " + dir);
  if (auto st = write_trial_pages(dir, trials); !st) return st;
  std::string html = render_report_html(trials, *agg, read_run_json(dir));
  if (auto st = write_file_atomic((fs::path(dir) / "aggregate.json").string(), *agg); !st) return st;
  if (auto st = write_tolokaforge_files(dir, trials); !st) return st;
  return write_file_atomic((fs::path(dir) / "report.html").string(), html);
}

Result<std::string> summary_table(const std::vector<TrialRecord>& trials, const AggregateOptions& options) {
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

}  // namespace forge::results
