// Network policy names, as written in manifests.
#include "manifest/environment.h"

namespace forge::manifest {

const char* policy_name(NetworkPolicy p) {
  switch (p) {
    case NetworkPolicy::kNoInternet:
      return "no_internet";
    case NetworkPolicy::kLimitedInternet:
      return "limited_internet";
    case NetworkPolicy::kFullInternet:
      return "full_internet";
  }
  return "no_internet";
}

std::optional<NetworkPolicy> policy_from_name(std::string_view name) {
  for (auto p : {NetworkPolicy::kNoInternet, NetworkPolicy::kLimitedInternet, NetworkPolicy::kFullInternet}) {
    if (name == policy_name(p)) return p;
  }
  return std::nullopt;
}

}  // namespace forge::manifest
