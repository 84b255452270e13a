// The enforcement probe (issue 24): before a sweep's first trial, a probe sandbox under each
// closed policy the sweep uses proves that this host enforces it — an unlisted name is refused,
// the daemon keeps the task network internal, and the host does not answer from it. A host that
// cannot (no iptables, a daemon that ignores `internal`) stops the run: never a weaker policy.
#pragma once

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include "core/host_settings.h"
#include "core/result.h"
#include "engine/client.h"
#include "manifest/environment.h"
#include "manifest/task_config.h"
#include "results/run_json.h"

namespace forge::sweep {

// The closed policies ("no_internet", "limited_internet") any phase of these tasks runs a
// network under; full_internet and network-free stacks need no probe. Sorted, distinct.
std::vector<manifest::NetworkPolicy> policies_to_probe(const std::vector<manifest::TaskConfig>& tasks,
                                                       bool harbor_shared_verifier);

// What the probe tries from the runner: the host's addresses (the task bridge's gateway, the
// host's own) at `port`, where forgectl listens, and `name`, which no allowlist holds.
struct ProbeTargets {
  std::vector<std::string> host_addresses;  // empty: the host check is skipped (see host_skipped)
  int port = 0;
  std::string name;
  std::string host_skipped;  // why the host is not tried (firewall off, remote daemon); empty: tried
};

// One sh script: connections to the host addresses in the background, then the name's lookup,
// printed on a "dns:" line.
std::string probe_script(const ProbeTargets& t);

// The verdict from the script's output and the host addresses whose listener accepted a
// connection: "unlisted name refused", "host unreachable". Pure: unit-tested.
std::vector<results::ProbeCheck> judge_probe(std::string_view output, const std::vector<std::string>& reached,
                                             const ProbeTargets& t);
// "network internal" from the daemon's inspect of the runner's network (true: Internal).
results::ProbeCheck judge_network(const std::string& network, const Result<bool>& internal);

struct ProbeOptions {
  HostSettings host = HostSettings::defaults();
  std::string engine;  // the engine's address, for the record and messages
  std::string run_id;  // the probe stack's owner label
  const std::atomic<int>* interrupted = nullptr;
};

// Brings up a probe stack (the built-in `none` stack, its network kept) under `policy`, runs the
// checks from its runner, removes it again (also on failure). A probe that cannot run at all (the
// stack does not come up: the firewall rule failed) is a failed probe, its error the observation.
results::ProbeRecord probe_policy(engine::Client& c, manifest::NetworkPolicy policy, const ProbeOptions& o);

// probe_policy for every policy, in parallel.
std::vector<results::ProbeRecord> probe_policies(engine::Client& c, const std::vector<manifest::NetworkPolicy>& policies,
                                                 const ProbeOptions& o);

// "the no_internet probe failed: host unreachable: …" for the first failed record; empty: all passed.
std::string probe_failure(const std::vector<results::ProbeRecord>& records);

}  // namespace forge::sweep
