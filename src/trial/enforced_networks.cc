// Which network each phase of a task's trials gets (run.json's network_policy).
#include "trial/enforced_networks.h"

#include "manifest/harbor/harbor_load.h"
#include "trial/local_trial.h"

namespace forge::trial {

namespace {

results::PhaseNetwork posture(manifest::NetworkPolicy p, const std::vector<std::string>& allowlist) {
  results::PhaseNetwork n{manifest::policy_name(p), {}};
  if (p == manifest::NetworkPolicy::kLimitedInternet) n.allowlist = allowlist;
  return n;
}

}  // namespace

results::TaskNetworks enforced_networks(const manifest::TaskConfig& task, bool harbor_shared_verifier) {
  results::TaskNetworks out;
  const auto& m = task.environment.manifest;
  out.setup = runs_locally(task) ? results::PhaseNetwork{"host", {}}
                                  : posture(manifest::phase_policy(m, manifest::Phase::kSetup), m.allowlist);
  out.agent = runs_locally(task) ? results::PhaseNetwork{"host", {}} : posture(m.network_policy, m.allowlist);
  // A task.yaml's test scripts: no network at all under grade: no_internet, else one of their own.
  out.grade = m.grade_network_policy == manifest::NetworkPolicy::kNoInternet ? results::PhaseNetwork{"none", {}}
                                                                           : posture(m.grade_network_policy, m.allowlist);
  if (!task.harbor) return out;
  if (harbor_shared_verifier && manifest::shared_verifier_applies(*task.harbor)) {
    out.grade = out.agent;  // the tests run in the agent's own runner, on its network
    return out;
  }
  const manifest::HarborNetwork& v = manifest::verifier_network(*task.harbor);
  if (v.mode != manifest::NetworkMode::kNoNetwork)
    out.grade = posture(manifest::harbor_posture(v.mode), v.allowed_hosts);
  return out;
}

}  // namespace forge::trial
