// Each verb registers its CLI11 subcommand; one file per verb.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/context.h"

namespace forge::cli {

// Each returns nothing; the subcommand's callback stores its exit code in `*rc`.
void add_doctor(CLI::App& app, Context& ctx, int* rc);
void add_images(CLI::App& app, Context& ctx, int* rc);
void add_up(CLI::App& app, Context& ctx, int* rc);
void add_down(CLI::App& app, Context& ctx, int* rc);
void add_ps(CLI::App& app, Context& ctx, int* rc);
void add_validate(CLI::App& app, Context& ctx, int* rc);
void add_tool(CLI::App& app, Context& ctx, int* rc);
void add_exec(CLI::App& app, Context& ctx, int* rc);
void add_run(CLI::App& app, Context& ctx, int* rc);
void add_serve(CLI::App& app, Context& ctx, int* rc);
void add_report(CLI::App& app, Context& ctx, int* rc);
void add_merge(CLI::App& app, Context& ctx, int* rc);
void add_slurm(CLI::App& app, Context& ctx, int* rc);
void add_show(CLI::App& app, Context& ctx, int* rc);
void add_version(CLI::App& app, Context& ctx, int* rc);
void add_completion(CLI::App& app, Context& ctx, int* rc);

}  // namespace forge::cli
