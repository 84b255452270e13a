// A Harbor verifier's network: a stack of its own planned from the verifier's network mode.
#include "trial/verifier_network.h"

#include "manifest/harbor/harbor_load.h"
#include "stack/teardown.h"

namespace forge::trial {

namespace {

bool proxy_variable(const std::string& kv) {
  for (const char* k : {"HTTP_PROXY=", "HTTPS_PROXY=", "http_proxy=", "https_proxy=", "NO_PROXY=", "no_proxy="})
    if (kv.rfind(k, 0) == 0) return true;
  return false;
}

}  // namespace

Result<std::optional<VerifierNetwork>> up_verifier_network(engine::Client& c, const manifest::HarborTask& task,
                                                           const manifest::HarborNetwork& net,
                                                           const VerifierNetworkOptions& o) {
  GraderNetworkSpec spec{task.id, task.config_path, task.dir, manifest::harbor_posture(net.mode), net.allowed_hosts};
  return up_grader_network(c, spec, o);
}

Result<std::optional<VerifierNetwork>> up_grader_network(engine::Client& c, const GraderNetworkSpec& spec,
                                                         const VerifierNetworkOptions& o) {
  if (spec.policy == manifest::NetworkPolicy::kNoInternet) return std::optional<VerifierNetwork>();
  // The stack's runner only holds the networks; the grader is a container of its own that joins
  // them. No compose services: the verifier reaches the internet its mode allows, not the task's
  // services nor the agent's runner, which the agent had in its hands.
  manifest::LoadedEnvironment env;
  env.source = spec.config_path;
  env.task_id = spec.task_id + "-verifier";
  env.base_dir = spec.dir;
  auto& m = env.manifest;
  m.path = spec.config_path;
  m.where = manifest::SourceLocation{spec.config_path, 0, 0};
  m.stack = "none";
  m.network_policy = spec.policy;
  m.allowlist = spec.allowlist;
  m.allow_private = o.allow_private;
  // The holder writes nothing: the smallest workspace, at a path no image has, so nothing of
  // the image's own workdir is copied into it.
  m.runner.disk_mb = manifest::kMinDiskMb;
  m.runner.workdir = "/.forgectl-verifier-net";
  auto up = stack::up_stack(c, env, o.up);
  if (!up)
    return up.fail_with("bringing up the grader's network (" + std::string(manifest::policy_name(spec.policy)) + ")");
  VerifierNetwork out;
  out.stack = up->name;
  out.networks = up->networks;
  const auto& runner = up->plan.runner;
  if (runner.networks.empty()) {
    (void)stack::remove_stack(c, out.stack);
    return fail(Errc::kInvalid, "the verifier's network: its stack has no network");
  }
  for (const auto& n : up->plan.networks)
    if (n.key == runner.networks.front().network_key) out.network = n.name;
  for (const auto& kv : runner.env)
    if (proxy_variable(kv)) out.env.push_back(kv);
  out.dns_options = runner.dns_options;
  out.dns = runner.dns;
  return std::optional<VerifierNetwork>(std::move(out));
}

std::string remove_verifier_network(engine::Client& c, const VerifierNetwork& n) {
  auto rep = stack::remove_stack(c, n.stack);
  return rep.clean() ? std::string() : rep.errors.front();
}

}  // namespace forge::trial
