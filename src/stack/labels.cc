// Stack labels.
#include "stack/labels.h"

#include <algorithm>
#include <cstdlib>

namespace forge::stack {

StackLabels StackLabels::owned_here(std::string stack, std::string run, std::string policy, std::string source,
                                    std::chrono::seconds lease, OwnerMode mode) {
  return {std::move(stack),
          std::move(run),
          std::move(policy),
          std::move(source),
          ProcessIdentity::current(),
          std::time(nullptr) + lease.count(),
          mode};
}

std::map<std::string, std::string> StackLabels::to_map() const {
  return {{kLabelStack, stack},
          {kLabelRun, run},
          {kLabelPolicy, policy},
          {kLabelSource, source},
          {kLabelOwner, owner.str()},
          {kLabelLease, std::to_string(static_cast<long long>(lease_expires))},
          {kLabelMode, mode == OwnerMode::kAttached ? "attached" : "detached"}};
}

std::map<std::string, std::string> StackLabels::for_object(std::string_view role) const {
  auto m = to_map();
  m[kLabelRole] = std::string(role);
  return m;
}

std::optional<ObjectOwnership> ownership_of(const std::map<std::string, std::string>& labels) {
  auto it = labels.find(kLabelStack);
  if (it == labels.end() || it->second.empty()) return std::nullopt;
  ObjectOwnership o;
  o.stack = it->second;
  if (auto ow = labels.find(kLabelOwner); ow != labels.end()) o.owner = ProcessIdentity::parse(ow->second);
  if (auto l = labels.find(kLabelLease); l != labels.end()) o.lease_expires = std::strtoll(l->second.c_str(), nullptr, 10);
  if (auto md = labels.find(kLabelMode); md != labels.end()) {
    if (md->second == "attached") o.mode = OwnerMode::kAttached;
    if (md->second == "detached") o.mode = OwnerMode::kDetached;
  }
  return o;
}

void StackOwnership::add(const ObjectOwnership& o) {
  if (o.owner &&
      std::none_of(owners.begin(), owners.end(), [&](const ProcessIdentity& p) { return p.str() == o.owner->str(); }))
    owners.push_back(*o.owner);
  lease_expires = std::max(lease_expires, o.lease_expires);
  if (o.mode == OwnerMode::kAttached) mode = OwnerMode::kAttached;
}

std::optional<ProcessIdentity> StackOwnership::shown_owner() const {
  for (const auto& p : owners)
    if (p.liveness() == ProcessIdentity::Liveness::kAlive) return p;
  if (owners.empty()) return std::nullopt;
  return owners.front();
}

}  // namespace forge::stack
