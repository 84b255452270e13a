// `forgectl down STACK... | --all | --orphans`: remove stacks by label, containers first.
#include <ctime>
#include <memory>
#include <ostream>

#include "cli/verbs.h"
#include "stack/inventory.h"
#include "stack/teardown.h"

namespace forge::cli {

namespace {

struct DownArgs {
  std::vector<std::string> stacks;
  bool all = false, orphans = false;
};

}  // namespace

void add_down(Command app, Context& ctx, int* rc) {
  auto args = std::make_shared<DownArgs>();
  auto cmd = app.subcommand("down", "Remove stacks: the named ones, all of them, or only orphans");
  cmd.option("stacks", args->stacks, "stack names (as printed by up and ps)");
  cmd.flag("--all", args->all, "remove every forgectl stack on the daemon");
  cmd.flag(
      "--orphans", args->orphans,
      "remove only stacks whose lease expired or whose owner died before finishing (never a live process's stack)");
  cmd.on_run([&ctx, rc, args] {
    int modes = !args->stacks.empty() + args->all + args->orphans;
    if (modes != 1) {
      *rc = ctx.report(make_error(Errc::kInvalid, "down takes stack names, or --all, or --orphans (exactly one of them)"));
      return;
    }
    auto c = ctx.client();
    if (!c) {
      *rc = ctx.report(c.error());
      return;
    }
    std::vector<std::pair<std::string, std::string>> targets;  // name, why
    if (!args->stacks.empty()) {
      for (const auto& s : args->stacks) targets.push_back({s, ""});
    } else {
      auto stacks = stack::list_stacks(**c);
      if (!stacks) {
        *rc = ctx.report(stacks.error());
        return;
      }
      std::time_t now = std::time(nullptr);
      for (const auto& [name, objs] : *stacks) {
        auto why = stack::orphan_reason(objs, now);
        if (args->all || why != stack::OrphanReason::kNone) targets.push_back({name, stack::orphan_reason_text(why)});
      }
    }
    *rc = kExitOk;
    for (const auto& [name, why] : targets) {
      auto rep = stack::remove_stack(**c, name);
      if (!args->stacks.empty() && rep.containers == 0 && rep.networks == 0 && rep.clean()) {
        *rc = ctx.report(make_error(Errc::kNotFound, "no stack named '" + name + "' (see forgectl ps)"));
        continue;
      }
      ctx.out << "removed " << name << ": " << rep.containers << " containers, " << rep.networks << " networks"
              << (why.empty() ? "" : " (" + why + ")") << '\n';
      for (const auto& e : rep.errors) *rc = ctx.report(make_error(Errc::kServer, name + ": " + e));
    }
  });
}

}  // namespace forge::cli
