// Each verb registers its subcommand; one file per verb.
#pragma once

#include "cli/command.h"
#include "cli/context.h"

namespace forge::cli {

// Each returns nothing; the subcommand's callback stores its exit code in `*rc`.
void add_doctor(Command app, Context& ctx, int* rc);
void add_images(Command app, Context& ctx, int* rc);
void add_up(Command app, Context& ctx, int* rc);
void add_down(Command app, Context& ctx, int* rc);
void add_ps(Command app, Context& ctx, int* rc);
void add_validate(Command app, Context& ctx, int* rc);
void add_tool(Command app, Context& ctx, int* rc);
void add_exec(Command app, Context& ctx, int* rc);
void add_run(Command app, Context& ctx, int* rc);
void add_serve(Command app, Context& ctx, int* rc);
// `serve dns`, a subcommand of `serve` (serve_dns.cc).
void add_serve_dns(Command serve, Context& ctx, int* rc);
void add_report(Command app, Context& ctx, int* rc);
void add_merge(Command app, Context& ctx, int* rc);
void add_slurm(Command app, Context& ctx, int* rc);
void add_show(Command app, Context& ctx, int* rc);
void add_version(Command app, Context& ctx, int* rc);

}  // namespace forge::cli
