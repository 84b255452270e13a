// Stack inventory by label.
#include "stack/inventory.h"

namespace forge::stack {

const char* orphan_reason_text(OrphanReason r) {
  switch (r) {
    case OrphanReason::kNone: return "";
    case OrphanReason::kLeaseExpired: return "lease expired";
    case OrphanReason::kOwnerGone: return "owner process gone";
    case OrphanReason::kUnfinished: return "owner died while bringing it up";
    case OrphanReason::kUnowned:
      return "no object names an owner or a lease";
  }
  return "";
}

bool is_orphan(OrphanReason r) { return r != OrphanReason::kNone && r != OrphanReason::kUnowned; }

StackObjects* add_object(std::map<std::string, StackObjects>& stacks,
                         const std::map<std::string, std::string>& labels) {
  auto own = ownership_of(labels);
  if (!own) return nullptr;
  auto& s = stacks[own->stack];
  s.name = own->stack;
  s.ownership.add(*own);
  for (const char* k : {kLabelRun, kLabelPolicy, kLabelSource, kLabelMode})
    if (auto it = labels.find(k); it != labels.end() && !it->second.empty()) s.labels.emplace(k, it->second);
  return &s;
}

Result<std::map<std::string, StackObjects>> list_stacks(engine::Client& c, std::string_view only) {
  std::string label = only.empty() ? std::string(kLabelStack) : std::string(kLabelStack) + "=" + std::string(only);
  engine::Filters f{{"label", {label}}};
  auto containers = engine::list_containers(c, f);
  if (!containers) return containers.fail();
  auto networks = engine::list_networks(c, f);
  if (!networks) return networks.fail();
  auto volumes = engine::list_volumes(c, f);
  if (!volumes) return volumes.fail();
  std::map<std::string, StackObjects> out;
  for (auto& ctr : *containers)
    if (auto* s = add_object(out, ctr.labels)) {
      if (s->created == 0 || ctr.created < s->created) s->created = ctr.created;
      s->containers.push_back(std::move(ctr));
    }
  for (auto& n : *networks)
    if (auto* s = add_object(out, n.labels)) s->networks.push_back(std::move(n));
  for (auto& v : *volumes)
    if (auto* s = add_object(out, v.labels)) s->volumes.push_back(std::move(v));
  return out;
}

OrphanReason orphan_reason(const StackObjects& s, std::time_t now) {
  const auto& o = s.ownership;
  bool elsewhere = false;
  for (const auto& owner : o.owners) {
    auto l = owner.liveness();
    if (l == ProcessIdentity::Liveness::kAlive) return OrphanReason::kNone;
    elsewhere = elsewhere || l == ProcessIdentity::Liveness::kUnknown;
  }
  if (o.lease_expires > 0 && o.lease_expires <= now) return OrphanReason::kLeaseExpired;
  if (o.owners.empty()) return o.lease_expires > 0 ? OrphanReason::kNone : OrphanReason::kUnowned;
  if (elsewhere) return OrphanReason::kNone;  // another host's process: only the lease can tell
  if (o.mode == OwnerMode::kAttached) return OrphanReason::kOwnerGone;
  for (const auto& ctr : s.containers) {
    auto role = ctr.labels.find(kLabelRole);
    if (role != ctr.labels.end() && role->second == "runner" && ctr.state == "running") return OrphanReason::kNone;
  }
  return OrphanReason::kUnfinished;
}

Result<std::vector<std::string>> daemon_subnets(engine::Client& c) {
  auto nets = engine::list_networks(c);
  if (!nets) return nets.fail();
  std::vector<std::string> used;
  for (const auto& n : *nets)
    for (const auto& cfg : n.ipam) used.push_back(cfg.subnet);
  return used;
}

}  // namespace forge::stack
