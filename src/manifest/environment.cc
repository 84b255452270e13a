// Network policy names, as written in manifests.
#include "manifest/environment.h"

#include <algorithm>

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

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::kSetup: return "setup";
    case Phase::kAgent: return "agent";
    case Phase::kGrade: return "grade";
  }
  return "agent";
}

NetworkPolicy phase_policy(const EnvironmentManifest& m, Phase p) {
  if (p == Phase::kGrade) return m.grade_network_policy;
  if (p == Phase::kSetup && m.setup_network_policy) return *m.setup_network_policy;
  return m.network_policy;
}

bool runner_changes_network(const EnvironmentManifest& m) {
  if (phase_policy(m, Phase::kSetup) != m.network_policy) return true;
  for (std::size_t i = 0; i < m.step_network_policies.size(); ++i) {
    if (m.step_network_policies[i] != m.network_policy) return true;
    const bool limited = m.step_network_policies[i] == NetworkPolicy::kLimitedInternet;
    if (limited && i < m.step_allowlists.size() && m.step_allowlists[i] != m.allowlist) return true;
  }
  return false;
}

bool runner_ever(const EnvironmentManifest& m, NetworkPolicy policy) {
  if (phase_policy(m, Phase::kSetup) == policy || m.network_policy == policy) return true;
  return std::find(m.step_network_policies.begin(), m.step_network_policies.end(), policy) != m.step_network_policies.end();
}

bool is_auto_runtime(std::string_view requested) {
  return requested.empty() || requested == "auto" || requested == "docker";
}

std::string runtime_name_problem(std::string_view r) {
  if (is_auto_runtime(r)) return {};
  auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  const bool ok = r.size() <= 64 && lower_or_digit(r[0]) && std::all_of(r.begin(), r.end(), [&](char c) {
                    return lower_or_digit(c) || c == '.' || c == '_' || c == '-';
                  });
  return ok ? std::string()
            : "'" + std::string(r) + "' is not a runtime name (auto, runc, crun, runsc, or a name the daemon lists)";
}

}  // namespace forge::manifest
