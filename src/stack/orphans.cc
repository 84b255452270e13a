// Orphan reaping.
#include "stack/orphans.h"

#include <ctime>

#include "engine/containers.h"
#include "engine/images.h"
#include "policy/subnets.h"
#include "stack/host_firewall.h"

namespace forge::stack {

namespace {

// A snapshot object's owner is gone (a process of this host that died); another host's, or one
// naming no owner, is kept.
bool dead_owner(const std::map<std::string, std::string>& labels) {
  auto it = labels.find(kLabelOwner);
  if (it == labels.end()) return false;
  auto owner = ProcessIdentity::parse(it->second);
  return owner && owner->liveness() == ProcessIdentity::Liveness::kDead;
}

// The set-up snapshots (docs/sweeps.md "Forks") of runs whose forgectl died: the containers they
// were being made or read in, then the images.
void reap_snapshots(engine::Client& c, ReapReport& rep) {
  engine::Filters f{{"label", {kLabelSnapshot}}};
  if (auto cs = engine::list_containers(c, f)) {
    for (const auto& ct : *cs)
      if (dead_owner(ct.labels))
        if (auto st = engine::remove_container(c, ct.id); !st) rep.errors.push_back(st.error().what());
  } else {
    rep.errors.push_back(cs.error().with_context("listing snapshot containers").what());
  }
  if (auto is = engine::list_images(c, f)) {
    for (const auto& i : *is) {
      if (!dead_owner(i.labels) || i.labels.count(kLabelSnapshotKey)) continue;  // kept: its owner is gone by design
      if (auto st = engine::remove_image(c, i.id, true); st) rep.snapshots.push_back(i.id);
      else if (st.error().code != Errc::kNotFound) rep.errors.push_back(st.error().what());
    }
  } else {
    rep.errors.push_back(is.error().with_context("listing snapshot images").what());
  }
}

}  // namespace

KeptSnapshotsRemoval remove_kept_snapshots(engine::Client& c) {
  KeptSnapshotsRemoval out;
  auto is = engine::list_images(c, {{"label", {kLabelSnapshotKey}}});
  if (!is) {
    out.errors.push_back(is.error().with_context("listing kept snapshot images").what());
    return out;
  }
  for (const auto& i : *is) {
    if (auto st = engine::remove_image(c, i.id, true); st) out.removed.push_back(i.id);
    else if (st.error().code != Errc::kNotFound) out.errors.push_back(st.error().what());
  }
  return out;
}

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
  reap_snapshots(c, rep);
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
