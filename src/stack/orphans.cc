// Orphan reaping.
#include "stack/orphans.h"

#include <ctime>

#include "policy/subnets.h"
#include "stack/host_firewall.h"

namespace forge::stack {

ReapReport reap_orphans(engine::Client& c, const HostSettings& host) {
  ReapReport rep;
  if (auto stacks = list_stacks(c)) {
    rep.listed = true;
    std::time_t now = std::time(nullptr);
    for (const auto& [name, objs] : *stacks) {
      auto why = orphan_reason(objs, now);
      if (why == OrphanReason::kUnowned) rep.unowned.push_back(name);
      if (is_orphan(why)) rep.stacks.push_back({name, why, remove_stack(c, name)});
    }
  } else {
    rep.errors.push_back(stacks.error().with_context("listing stacks").what());
  }
  // A forgectl killed between reserving its subnets and creating the networks left reservations.
  auto pool = policy::SubnetPool::from_settings(host);
  auto pruned = pool ? pool->prune() : Result<std::size_t>(pool.fail());
  if (pruned)
    rep.reservations = *pruned;
  else
    rep.errors.push_back(pruned.error().what());
  if (host.host_firewall && c.transport().is_local()) {
    if (auto stale = remove_stale_host_rules())
      rep.stale_rules = std::move(*stale);
    else
      rep.errors.push_back(stale.error().what());
  }
  return rep;
}

}  // namespace forge::stack
