// `up`: materialise a stack from a loaded environment — networks, host firewall, sidecar,
// services in dependency order, health waits, then the runner — every container's hardening
// read back; on any failure or interruption everything created is removed again.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <string>

#include "core/host_settings.h"
#include "engine/client.h"
#include "engine/system.h"
#include "manifest/environment.h"
#include "core/slots.h"
#include "policy/topology.h"
#include "stack/labels.h"

namespace forge::stack {

inline constexpr const char* kDefaultProxyImage = "forgectl/squid:local";

struct UpOptions {
  std::string runner_image;  // overrides the manifest's
  std::string proxy_image;   // empty: host.proxy_image (FORGECTL_PROXY_IMAGE)
  HostSettings host = HostSettings::defaults();  // subnet pool, state dir, helper, firewall, env
  OwnerMode mode = OwnerMode::kDetached;
  std::chrono::seconds lease{12 * 3600};
  std::string run_id;  // empty: a fresh one
  Millis health_timeout{120000};
  std::function<void(std::string_view)> progress;  // one line per step; may be empty
  const std::atomic<int>* interrupted = nullptr;   // > 0: stop and tear down
  // "K=V" added to a service's environment by its key (json-db's control token); never the runner's.
  std::map<std::string, std::vector<std::string>> service_env;
  Slots* build_slots = nullptr;  // a sweep's limit on image builds at once (compose `build:`); null: none
  // A stack that needs no network (policy::network_free) gets none: NetworkMode none, no subnet,
  // no bridge, no host rule (a sweep's trials; policy::PlanOptions::omit_unused_network).
  bool omit_unused_network = false;
  // The engine's /info, asked once by a sweep for all its trials (sweep::EngineSlot); null: up_stack asks.
  const engine::SystemInfo* engine_info = nullptr;
  // The runner's OCI runtime (--runtime, orchestrator.runtime) over the manifest's `runtime:`;
  // empty: the manifest's, else the daemon's default (stack/runtime.h).
  std::string runtime;
  // Called once the stack's labels and plan are final (its images present, the helper volume
  // ready), before its networks and containers exist, on up's thread: a caller starts there what
  // needs only those (a trial's grader made ahead) beside the rest of up. It must not block.
  // Whatever it makes carries the stack's labels, so a failed up's teardown removes it too.
  std::function<void(const StackLabels&, const policy::StackPlan&)> on_planned;
};

struct UpResult {
  std::string name;
  // The stack's labels: whatever a later phase creates for it (grader, golden replay, probes)
  // carries them too (StackLabels::for_object), so no object of the stack hides its owner.
  StackLabels labels;
  policy::StackPlan plan;
  std::map<std::string, std::string> containers;  // plan key → container id
  std::map<std::string, std::string> networks;    // plan key → network id
  std::string runtime;  // the runner's OCI runtime, as the daemon names it ("runc" for its default runc)
  Millis took{0};
};

Result<UpResult> up_stack(engine::Client& c, const manifest::LoadedEnvironment& env, const UpOptions& opts);

// "fg-<slug>-<random>": lower-case, safe for container and DNS names.
std::string new_stack_name(std::string_view hint);

}  // namespace forge::stack
