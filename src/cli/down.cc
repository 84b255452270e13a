// `forgectl down STACK... | --all | --orphans | --snapshots`: remove stacks by label, containers first.
#include <memory>
#include <ostream>

#include "cli/verbs.h"
#include "stack/inventory.h"
#include "stack/orphans.h"
#include "stack/teardown.h"

namespace forge::cli {

namespace {

struct DownArgs {
  std::vector<std::string> stacks;
  bool all = false, orphans = false, snapshots = false;
};

void print_removed(Context& ctx, int* rc, const std::string& name, const stack::TeardownReport& rep,
                   const std::string& why) {
  // Volumes only when some were left on their own: a container's anonymous ones go with it.
  ctx.out << "removed " << name << ": " << rep.containers << " containers, " << rep.networks << " networks"
          << (rep.volumes > 0 ? ", " + std::to_string(rep.volumes) + " volumes" : "")
          << (why.empty() ? "" : " (" + why + ")") << '\n';
  for (const auto& e : rep.errors) *rc = ctx.report(make_error(Errc::kServer, name + ": " + e));
}

// --orphans: the orphaned stacks, then what their dead owners left on this host.
void down_orphans(Context& ctx, int* rc, engine::Client& c) {
  // Three seconds' look for a create the daemon finishes for a just-killed owner (down --orphans
  // right after a SIGKILL is its common use; a loaded daemon takes seconds over a network).
  auto rep = stack::reap_orphans(c, ctx.host, Millis(3000));
  for (const auto& s : rep.stacks) print_removed(ctx, rc, s.name, s.removed, stack::orphan_reason_text(s.why));
  for (const auto& name : rep.unowned)
    ctx.err << "forgectl: kept " << name << ": " << stack::orphan_reason_text(stack::OrphanReason::kUnowned)
            << ", so nothing tells whether it is in use; remove it with 'forgectl down " << name << "'\n";
  if (rep.reservations > 0)
    ctx.out << "dropped " << rep.reservations << " subnet reservation(s) of forgectl processes that are gone\n";
  for (const auto& id : rep.snapshots)
    ctx.out << "removed snapshot image " << id << " (its run's forgectl is gone)\n";
  for (const auto& name : rep.stale_rules)
    ctx.out << "removed leftover host firewall rules of " << name << '\n';
  for (const auto& e : rep.errors) *rc = ctx.report(make_error(Errc::kServer, e));
}

// --snapshots: the set-up snapshots runs kept (run --keep-snapshots).
void down_snapshots(Context& ctx, int* rc, engine::Client& c) {
  auto rep = stack::remove_kept_snapshots(c);
  for (const auto& id : rep.removed) ctx.out << "removed kept snapshot image " << id << '\n';
  if (rep.removed.empty() && rep.errors.empty()) ctx.out << "no kept snapshot images\n";
  for (const auto& e : rep.errors) *rc = ctx.report(make_error(Errc::kServer, e));
}

}  // namespace

void add_down(Command app, Context& ctx, int* rc) {
  auto args = std::make_shared<DownArgs>();
  auto cmd = app.subcommand("down", "Remove stacks: the named ones, all of them, or only orphans");
  cmd.option("stacks", args->stacks, "stack names (as printed by up and ps)");
  cmd.flag("--all", args->all, "remove every forgectl stack on the daemon");
  cmd.flag("--orphans", args->orphans,
           "remove only stacks whose owner died (a sweep's, or an up's before it finished) or whose lease "
           "expired, and what dead owners left on this host (never a live process's stack)");
  cmd.flag("--snapshots", args->snapshots,
           "remove the set-up snapshot images runs kept with run --keep-snapshots (docs/sweeps.md \"Forks\"); "
           "--orphans never does");
  cmd.on_run([&ctx, rc, args] {
    int modes = !args->stacks.empty() + args->all + args->orphans + args->snapshots;
    if (modes != 1) {
      *rc = ctx.report(
          make_error(Errc::kInvalid, "down takes stack names, or --all, or --orphans, or --snapshots (exactly one of them)"));
      return;
    }
    auto c = ctx.client();
    if (!c) {
      *rc = ctx.report(c.error());
      return;
    }
    *rc = kExitOk;
    if (args->orphans) return down_orphans(ctx, rc, **c);
    if (args->snapshots) return down_snapshots(ctx, rc, **c);
    std::vector<std::string> targets = args->stacks;
    if (args->all) {
      auto stacks = stack::list_stacks(**c);
      if (!stacks) {
        *rc = ctx.report(stacks.error());
        return;
      }
      for (const auto& [name, objs] : *stacks) targets.push_back(name);
    }
    for (const auto& name : targets) {
      auto rep = stack::remove_stack(**c, name);
      if (!args->stacks.empty() && rep.containers == 0 && rep.volumes == 0 && rep.networks == 0 && rep.clean()) {
        *rc = ctx.report(make_error(Errc::kNotFound, "no stack named '" + name + "' (see forgectl ps)"));
        continue;
      }
      print_removed(ctx, rc, name, rep, "");
    }
  });
}

}  // namespace forge::cli
