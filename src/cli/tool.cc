// `forgectl tool STACK NAME 'JSON'`: one tool call through the same governed path the agent uses;
// prints exactly what the model would receive. `--local DIR` runs it on the host instead.
#include <memory>
#include <ostream>

#include "cli/verbs.h"
#include "tools/local_guard.h"
#include "tools/local_sandbox.h"
#include "tools/stack_tools.h"
#include "tools/toolbox.h"

namespace forge::cli {

namespace {

struct ToolArgs {
  std::string target, name, arguments = "{}";
  bool local = false, as_user = false;
};

}  // namespace

void add_tool(Command app, Context& ctx, int* rc) {
  auto args = std::make_shared<ToolArgs>();
  auto cmd =
      app.subcommand("tool", "Call one tool in a stack's runner, as the agent would; print what the model receives");
  cmd.option("target", args->target, "stack name (or, with --local, a host directory)").required();
  cmd.option("name", args->name, "tool name, e.g. bash or read_file").required();
  cmd.option("arguments", args->arguments, "the arguments as one JSON object").default_val("{}");
  cmd.flag("--as-user", args->as_user, "call as the user simulator instead of the agent");
  cmd.flag(
      "--local", args->local,
      "run on the host in the directory TARGET with the local executor (trusted tasks only; every built-in enabled)");
  cmd.on_run([&ctx, rc, args] {
    std::unique_ptr<tools::ToolExecutor> exec;
    tools::StackTools stack_tools;
    if (args->local) {
      auto sb = tools::LocalSandbox::open(args->target);
      if (!sb) {
        *rc = ctx.report(sb.error());
        return;
      }
      tools::BuiltinOptions b;
      b.sandbox = tools::guard_local(std::move(*sb), std::make_shared<tools::LocalWarning>(&ctx.log, ctx.host.require_container));
      auto e = tools::make_toolbox({{}, b, {}, nullptr, {}});  // the outcome is printed; no log line too
      if (!e) {
        *rc = ctx.report(e.error());
        return;
      }
      exec = std::move(*e);
    } else {
      auto c = ctx.client();
      if (!c) {
        *rc = ctx.report(c.error());
        return;
      }
      auto t = tools::open_stack_tools(**c, args->target, {});
      if (!t) {
        *rc = ctx.report(t.error());
        return;
      }
      stack_tools = std::move(*t);
      exec = std::move(stack_tools.executor);
    }
    auto out = exec->call(args->as_user ? tools::Actor::kUser : tools::Actor::kAgent, args->name, args->arguments);
    ctx.out << out.content;
    if (out.content.empty() || out.content.back() != '\n') ctx.out << '\n';
    *rc = out.kind == tools::ToolOutcome::Kind::kOk ? kExitOk : kExitFailure;
  });
}

}  // namespace forge::cli
