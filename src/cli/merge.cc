// `forgectl merge --out DIR SOURCE_DIR... [--force] [--partial] [--json]`: the run directories of a
// run's shards into one, then its reports and summary table.
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cli/verbs.h"
#include "core/json.h"
#include "results/merge.h"
#include "results/report_files.h"

namespace forge::cli {

namespace {

struct MergeArgs {
  std::string out;
  std::vector<std::string> sources;
  bool force = false;
  bool partial = false;
  bool json = false;
};

int merge_run(Context& ctx, const MergeArgs& args) {
  auto merged =
      results::merge_runs(args.sources, args.out, results::MergeOptions{.force = args.force, .partial = args.partial});
  if (!merged) return ctx.report(merged.error());
  for (const auto& w : merged->warnings) ctx.log.warn(w);
  for (const auto& d : merged->missing_dirs) ctx.log.warn("no trial directory " + d + " (its record is merged)");
  if (args.json) {
    json::Writer w;
    w.begin_object().field("out", args.out).field("trials", static_cast<int>(merged->trials.size()));
    w.field("duplicates", merged->duplicates).key("sources").begin_array();
    for (const auto& s : merged->sources)
      w.begin_object()
          .field("path", s.path)
          .field("run_id", s.run_id)
          .field("shard", s.shard)
          .field("trials", s.trials)
          .end_object();
    w.end_array().field("missing_dirs", merged->missing_dirs).field("warnings", merged->warnings).end_object();
    ctx.out << w.take() << '\n';
    return kExitOk;
  }
  ctx.out << "merged " << merged->trials.size() << " trial(s) from " << merged->sources.size() << " run(s) into "
          << args.out << '\n';
  for (const auto& s : merged->sources)
    ctx.out << "  " << s.path << ": " << s.trials << " trial(s)" << (s.run_id.empty() ? "" : ", run " + s.run_id)
            << (s.shard.empty() ? "" : ", shard " + s.shard) << '\n';
  if (merged->duplicates)
    ctx.out << merged->duplicates << " trial(s) recorded by more than one run: kept the graded, else the later one\n";
  if (!merged->warnings.empty() || !merged->missing_dirs.empty())
    ctx.out << merged->warnings.size() + merged->missing_dirs.size() << " warning(s), above\n";
  results::AggregateOptions options;
  options.max_infra_rate = results::max_infra_rate_of(args.out);  // the merged run.json's: the strictest shard's
  auto table = results::summary_table(merged->trials, options);
  if (!table) return ctx.report(table.error());
  ctx.out << *table;
  return kExitOk;
}

}  // namespace

void add_merge(Command app, Context& ctx, int* rc) {
  auto args = std::make_shared<MergeArgs>();
  auto cmd = app.subcommand("merge", "Merge the run directories of a run's shards into a new run directory");
  cmd.option("--out", args->out, "the merged run directory (created; must not exist or be empty)").required();
  cmd.option("sources", args->sources, "run directories to merge (each holds trials.jsonl)").required();
  cmd.flag("--force", args->force, "merge even when the runs' config_hash differ");
  cmd.flag("--partial", args->partial,
           "merge even when a run directory is missing or unfinished, or a shard of the split is absent "
           "(each is named as a warning)");
  cmd.flag("--json", args->json, "print one JSON document instead of the summary");
  cmd.on_run([&ctx, rc, args] { *rc = merge_run(ctx, *args); });
}

}  // namespace forge::cli
