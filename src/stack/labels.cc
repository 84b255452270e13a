// Stack labels.
#include "stack/labels.h"

#include <cstdlib>

namespace forge::stack {

std::map<std::string, std::string> StackLabels::to_map() const {
  return {{kLabelStack, stack},
          {kLabelRun, run},
          {kLabelPolicy, policy},
          {kLabelSource, source},
          {kLabelOwner, owner.str()},
          {kLabelLease, std::to_string(static_cast<long long>(lease_expires))},
          {kLabelMode, mode == OwnerMode::kAttached ? "attached" : "detached"}};
}

std::optional<StackOwnership> ownership_of(const std::map<std::string, std::string>& labels) {
  auto it = labels.find(kLabelStack);
  if (it == labels.end() || it->second.empty()) return std::nullopt;
  StackOwnership o;
  o.stack = it->second;
  if (auto ow = labels.find(kLabelOwner); ow != labels.end()) o.owner = ProcessIdentity::parse(ow->second);
  if (auto l = labels.find(kLabelLease); l != labels.end()) o.lease_expires = std::strtoll(l->second.c_str(), nullptr, 10);
  if (auto md = labels.find(kLabelMode); md != labels.end() && md->second == "attached") o.mode = OwnerMode::kAttached;
  return o;
}

}  // namespace forge::stack
