// Stack inventory by label.
#include "stack/inventory.h"

namespace forge::stack {

const char* orphan_reason_text(OrphanReason r) {
  switch (r) {
    case OrphanReason::kNone: return "";
    case OrphanReason::kLeaseExpired: return "lease expired";
    case OrphanReason::kOwnerGone: return "owner process gone";
    case OrphanReason::kUnfinished: return "owner died while bringing it up";
  }
  return "";
}

Result<std::map<std::string, StackObjects>> list_stacks(engine::Client& c, std::string_view only) {
  std::string label = only.empty() ? std::string(kLabelStack) : std::string(kLabelStack) + "=" + std::string(only);
  engine::Filters f{{"label", {label}}};
  auto containers = engine::list_containers(c, f);
  if (!containers) return containers.fail();
  auto networks = engine::list_networks(c, f);
  if (!networks) return networks.fail();
  std::map<std::string, StackObjects> out;
  auto entry = [&](const std::map<std::string, std::string>& labels) -> StackObjects* {
    auto own = ownership_of(labels);
    if (!own) return nullptr;
    auto& s = out[own->stack];
    if (s.name.empty()) {
      s.name = own->stack;
      s.ownership = *own;
      s.labels = labels;
    }
    return &s;
  };
  for (auto& ctr : *containers)
    if (auto* s = entry(ctr.labels)) {
      if (s->created == 0 || ctr.created < s->created) s->created = ctr.created;
      s->containers.push_back(std::move(ctr));
    }
  for (auto& n : *networks)
    if (auto* s = entry(n.labels)) s->networks.push_back(std::move(n));
  return out;
}

OrphanReason orphan_reason(const StackObjects& s, std::time_t now) {
  if (s.ownership.lease_expires > 0 && s.ownership.lease_expires <= now) return OrphanReason::kLeaseExpired;
  if (!s.ownership.owner) return OrphanReason::kNone;  // unknown owner: only the lease can tell
  if (s.ownership.owner->liveness() != ProcessIdentity::Liveness::kDead) return OrphanReason::kNone;
  if (s.ownership.mode == OwnerMode::kAttached) return OrphanReason::kOwnerGone;
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
