// `forgectl exec STACK -- CMD...`: a command in a stack's runner, through forgectl's helper (the
// path the agent's tools take), with its output and exit code passed through.
#include <memory>
#include <ostream>

#include "cli/verbs.h"
#include "manifest/scalar_parse.h"
#include "tools/stack_tools.h"

namespace forge::cli {

namespace {

struct ExecArgs {
  std::string stack, timeout = "10m", workdir;
  std::vector<std::string> command;
};

}  // namespace

void add_exec(Command app, Context& ctx, int* rc) {
  auto args = std::make_shared<ExecArgs>();
  auto cmd = app.subcommand("exec", "Run a command in a stack's runner (forgectl exec STACK -- CMD ...)");
  cmd.option("stack", args->stack, "stack name").required();
  cmd.option("command", args->command, "the command and its arguments, after --").required();
  cmd.option("--timeout", args->timeout, "kill the command (and everything it started) after this long")
      .default_val("10m");
  cmd.option("-w,--workdir", args->workdir, "working directory in the runner (default: the workspace)");
  cmd.on_run([&ctx, rc, args] {
    auto timeout = manifest::parse_duration(args->timeout);
    if (!timeout || timeout->count() <= 0) {
      *rc = ctx.report(make_error(Errc::kInvalid, "--timeout '" + args->timeout + "' is not a duration like 30s or 10m"));
      return;
    }
    auto c = ctx.client();
    if (!c) {
      *rc = ctx.report(c.error());
      return;
    }
    tools::OpenOptions o;
    o.log = &ctx.log;
    o.start_mcp = false;
    auto t = tools::open_stack_tools(**c, args->stack, o);
    if (!t) {
      *rc = ctx.report(t.error());
      return;
    }
    tools::RunRequest req;
    req.argv = args->command;
    req.cwd = args->workdir;
    req.timeout = *timeout;
    req.output_cap = 16u << 20;
    auto r = t->sandbox->run(req);
    if (!r) {
      *rc = ctx.report(r.error());
      return;
    }
    ctx.out << r->out;
    ctx.err << r->err;
    if (r->out_dropped || r->err_dropped)
      ctx.log.warn("output beyond 16 MiB per stream was dropped (" + std::to_string(r->out_dropped + r->err_dropped) + " bytes)");
    if (r->timed_out) {
      ctx.log.error("the command was killed after " + args->timeout);
      *rc = 124;
      return;
    }
    *rc = r->exit_code;
  });
}

}  // namespace forge::cli
