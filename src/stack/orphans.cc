// Orphan reaping.
#include "stack/orphans.h"

#include <algorithm>
#include <ctime>
#include <set>
#include <thread>

#include "core/clock.h"
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

// Looks again for `settle`: a stack the daemon was still making for a dead owner (it finishes a
// request whose client died: a container, or a network the first listing did not show) is an
// orphan too, removed as it appears.
void remove_late_creates(engine::Client& c, ReapReport& rep, Millis settle) {
  constexpr Millis kLook{250};
  for (auto until = Deadline::in(settle); !until.expired();) {
    std::this_thread::sleep_for(kLook);
    auto stacks = list_stacks(c);
    if (!stacks) return rep.errors.push_back(stacks.error().with_context("listing stacks again").what());
    const std::time_t now = std::time(nullptr);
    for (const auto& [name, objs] : *stacks) {
      auto why = orphan_reason(objs, now);
      if (!is_orphan(why)) continue;
      auto removed = remove_stack(c, name);
      auto seen = std::find_if(rep.stacks.begin(), rep.stacks.end(), [&](const ReapedStack& s) { return s.name == name; });
      if (seen == rep.stacks.end()) {
        rep.stacks.push_back({name, why, std::move(removed)});
      } else {
        auto& r = seen->removed;
        r.containers += removed.containers, r.volumes += removed.volumes, r.networks += removed.networks;
        for (const auto& e : removed.errors) r.errors.push_back(e);
      }
    }
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
    // Never forced: a container forking from it (a live run's) keeps it, named.
    auto st = engine::remove_image(c, i.id, false);
    if (st) out.removed.push_back(i.id);
    else if (st.error().code == Errc::kConflict)
      out.errors.push_back("kept snapshot image " + i.id + " is in use by a container (a run forking from it?); kept");
    else if (st.error().code != Errc::kNotFound)
      out.errors.push_back(st.error().what());
  }
  return out;
}

ReapReport reap_orphans(engine::Client& c, const HostSettings& host, Millis settle) {
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
  remove_late_creates(c, rep, settle);
  reap_snapshots(c, rep);
  // A forgectl killed between reserving its subnets and creating the networks left reservations.
  auto pool = policy::SubnetPool::from_settings(host);
  auto pruned = pool ? pool->prune() : Result<std::size_t>(pool.fail());
  if (pruned)
    rep.reservations = *pruned;
  else
    rep.errors.push_back(pruned.error().what());
  if (host.host_firewall && c.transport().is_local()) {
    std::set<std::string> removed;
    for (const auto& s : rep.stacks)  // never a stack whose containers may still run
      if (s.removed.clean()) removed.insert(s.name);
    if (auto stale = remove_stale_host_rules(removed))
      rep.stale_rules = std::move(*stale);
    else
      rep.errors.push_back(stale.error().what());
  }
  return rep;
}

}  // namespace forge::stack
