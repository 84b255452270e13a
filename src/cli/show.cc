// `forgectl show RUN_DIR [TASK [IDX]] [--agent A] [--compare A,B]... [--json]`: the report in the
// terminal — the run per agent with its comparisons, a task's trials, a trial's transcript and grade.
#include <memory>
#include <ostream>

#include "cli/compare_flag.h"
#include "cli/verbs.h"
#include "results/show.h"

namespace forge::cli {

namespace {

struct ShowArgs {
  std::string dir, task, agent;
  int index = -1;
  std::vector<std::string> compare;
  bool json = false;
};

int show_run(Context& ctx, const ShowArgs& a, const Command& cmd) {
  results::ShowRequest r;
  r.dir = a.dir;
  if (!a.task.empty()) r.task = a.task;
  if (cmd.given("index")) {
    if (a.index < 0) return ctx.report(make_error(Errc::kInvalid, "IDX must be 0 or more"));
    r.index = a.index;
  }
  r.agent = a.agent;
  r.json = a.json;
  auto pairs = parse_compare(a.compare);
  if (!pairs) return ctx.report(pairs.error());
  r.aggregate.compare = *pairs;
  auto text = results::show(r);
  if (!text) return ctx.report(text.error());
  ctx.out << *text;
  return kExitOk;
}

}  // namespace

void add_show(Command app, Context& ctx, int* rc) {
  auto args = std::make_shared<ShowArgs>();
  auto cmd = app.subcommand(
      "show", "Show a run in the terminal: per agent and compared, a task's trials, a trial's transcript");
  cmd.option("dir", args->dir, "run directory (holds trials.jsonl)").required();
  cmd.option("task", args->task, "a task id: its trials");
  cmd.option("index", args->index, "a trial index: that trial's transcript and grade");
  cmd.option("--agent", args->agent, "only this agent's trials");
  cmd.option("--compare", args->compare, "compare only these agents: A,B (B − A); repeatable").one_value_each();
  cmd.flag("--json", args->json, "print one JSON document");
  cmd.on_run([&ctx, rc, args, cmd] { *rc = show_run(ctx, *args, cmd); });
}

}  // namespace forge::cli
