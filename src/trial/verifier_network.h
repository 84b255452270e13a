// The network a Harbor verifier joins ([verifier].network_mode, docs/harbor.md "The verifier's
// network"): none for no-network; otherwise a small stack of its own with the agent phase's
// semantics — public: a plain bridge; allowlist: an internal network whose only way out is an
// egress proxy allowing the listed hosts — never the trial's own networks.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "engine/client.h"
#include "manifest/harbor/harbor_task.h"
#include "stack/up.h"

namespace forge::trial {

struct VerifierNetwork {
  std::string stack;                            // the verifier network's own stack, removed by remove_verifier_network
  std::string network;                          // the Docker network the grader joins
  std::vector<std::string> env;                 // the proxy variables (allowlist), "K=V"
  std::vector<std::string> dns_options;         // fast failures on a closed network
  std::vector<std::string> dns;                 // its resolver (policy::ContainerPlan::dns)
  std::map<std::string, std::string> networks;  // plan key ("net" | "internal" | "edge") → id
};

struct VerifierNetworkOptions {
  stack::UpOptions up;  // host settings, run id, lease, interruption; runner_image = the task's image
  // The egress proxy's refusal of private addresses, lifted (a test whose "internet" is a
  // container on a private subnet); tasks cannot ask for it.
  bool allow_private = false;
};

// Which grader network to bring up: a policy (no_internet: none) and, under limited_internet,
// its allowlist; the task it is for, for the stack's name and messages.
struct GraderNetworkSpec {
  std::string task_id, config_path, dir;
  manifest::NetworkPolicy policy = manifest::NetworkPolicy::kNoInternet;
  std::vector<std::string> allowlist;
};

// nullopt for no_internet; otherwise the grader's stack, up, with the grader's network, its
// proxy variables and DNS options. Its objects carry the run's labels, so `down --orphans` reaps
// them should forgectl die before remove_verifier_network.
Result<std::optional<VerifierNetwork>> up_grader_network(engine::Client& c, const GraderNetworkSpec& spec,
                                                         const VerifierNetworkOptions& o);
// A Harbor verifier's: its network mode as a policy (no-network: none).
Result<std::optional<VerifierNetwork>> up_verifier_network(engine::Client& c, const manifest::HarborTask& task,
                                                           const manifest::HarborNetwork& net,
                                                           const VerifierNetworkOptions& o);

// Removes the verifier's stack; a problem is returned as text (teardown goes on regardless).
std::string remove_verifier_network(engine::Client& c, const VerifierNetwork& n);

}  // namespace forge::trial
