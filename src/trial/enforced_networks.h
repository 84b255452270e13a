// The network each phase of a task's trials runs under, as forgectl enforces it: run.json's
// network_policy, so a result is never quoted without the network it was had on.
#pragma once

#include "manifest/task_config.h"
#include "results/run_json.h"

namespace forge::trial {

// setup and agent: the runner's stack (its network_policy and allowlist; "host" on the local
// executor, where nothing is enforced). grade: "none" for grading.yaml tasks (grading runs on the
// host; test scripts and checks.py run in a container with no network); a Harbor task's verifier
// network, or the agent's own network when `harbor_shared_verifier` runs its tests in the runner.
results::TaskNetworks enforced_networks(const manifest::TaskConfig& task, bool harbor_shared_verifier);

}  // namespace forge::trial
