// `forgectl report DIR [--compare A,B]... [--json]`: re-renders aggregate.json, report.html and
// every trial's trial.html from DIR/trials.jsonl and prints the summary table (or aggregate.json).
#include <filesystem>
#include <memory>
#include <ostream>
#include <set>

#include "cli/compare_flag.h"
#include "cli/verbs.h"
#include "core/files.h"
#include "results/report_files.h"
#include "results/trial_record.h"

namespace forge::cli {

namespace {

struct ReportArgs {
  std::string dir;
  std::vector<std::string> compare;
  bool json = false;
};

int report_run(Context& ctx, const ReportArgs& a) {
  const std::string& dir = a.dir;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return ctx.report(make_error(Errc::kNotFound, "run directory '" + dir + "' does not exist"));
  auto pairs = parse_compare(a.compare);
  if (!pairs) return ctx.report(pairs.error());
  std::string path = (std::filesystem::path(dir) / "trials.jsonl").string();
  auto log = results::read_trials_jsonl(path);
  if (!log) return ctx.report(log.error().with_context("reading the run " + dir));
  if (log->skipped_last_lines)
    ctx.log.warn(path + ": skipped the last line, cut short (a crash mid-write); that trial reruns on --resume");
  std::set<std::string> agents;
  for (const auto& t : log->trials) agents.insert(t.agent);
  for (const auto& [x, y] : *pairs)
    for (const auto& label : {x, y})
      if (!agents.count(label)) {
        std::string known;
        for (const auto& l : agents) known += (known.empty() ? "" : ", ") + l;
        return ctx.report(
            make_error(Errc::kInvalid, "--compare: no agent '" + label + "' in " + dir + " (agents: " + known + ")"));
      }
  results::AggregateOptions options{*pairs};
  options.max_infra_rate = results::max_infra_rate_of(dir);  // the run's own threshold (run.json)
  if (auto st = results::write_reports(dir, log->trials, options); !st) return ctx.report(st.error());
  if (a.json) {
    auto text = read_text(std::filesystem::path(dir) / "aggregate.json");
    if (!text) return ctx.report(text.error());
    ctx.out << *text;
    return kExitOk;
  }
  auto table = results::summary_table(log->trials, options);
  if (!table) return ctx.report(table.error());
  ctx.out << *table << "wrote " << (std::filesystem::path(dir) / "aggregate.json").string() << ", "
          << (std::filesystem::path(dir) / "report.html").string() << " and the trials' trial.html\n";
  return kExitOk;
}

}  // namespace

void add_report(Command app, Context& ctx, int* rc) {
  auto args = std::make_shared<ReportArgs>();
  auto cmd = app.subcommand(
      "report", "Re-render aggregate.json, report.html and the trial pages of a run directory; print its summary");
  cmd.option("dir", args->dir, "run directory (holds trials.jsonl)").required();
  cmd.option("--compare", args->compare, "compare only these agents: A,B (B − A); repeatable; default: every pair")
      .one_value_each();
  cmd.flag("--json", args->json, "print aggregate.json instead of the table");
  cmd.on_run([&ctx, rc, args] { *rc = report_run(ctx, *args); });
}

}  // namespace forge::cli
