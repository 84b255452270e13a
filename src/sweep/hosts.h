// The Docker engines one sweep spreads over (`--docker-host`, repeatable): a client per engine,
// trials placed on the least busy one, each engine prepared before the first trial (local images
// built where missing, dead owners' orphans reaped) and audited after the last (nothing of this
// run left behind).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/host_settings.h"
#include "core/log.h"
#include "core/slots.h"
#include "engine/client.h"
#include "engine/system.h"

namespace forge::sweep {

struct EngineSlot {
  std::string address;  // as the user wrote it, or the default socket; in trials.jsonl as docker_host
  std::unique_ptr<engine::Client> client;
  std::optional<engine::SystemInfo> info;  // /info, asked once by prepare_engines
  int active = 0;       // trials placed here and not finished
};

class HostPool {
 public:
  // Connects to every address (empty: DOCKER_HOST or the default socket). An unreachable engine
  // is an error naming it: a sweep does not silently run on fewer hosts than asked.
  static Result<std::unique_ptr<HostPool>> connect(const std::vector<std::string>& addresses, const HostSettings& host);

  // The engine with the fewest running trials (ties: the first given); release() when done.
  EngineSlot& acquire();
  void release(EngineSlot& e);

  std::vector<std::unique_ptr<EngineSlot>>& engines() { return engines_; }
  EngineSlot& primary() { return *engines_.front(); }

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<EngineSlot>> engines_;
};

// Free space under a local engine's root below which a sweep refuses to start, and warns.
inline constexpr std::uint64_t kMinFreeMib = 1024, kWarnFreeMib = 5120;

// Before the first trial, on every engine in parallel: checks the disk under a local engine's
// root, builds the local images it lacks (at most `builds` builds at once), and removes orphaned
// stacks of dead owners (never a live one's).
// The services image is not among them (node_images.h: ensure_services_image). Builds happen
// under the engine's image lock (node_images.h), so concurrent runs on one host build once.
Status prepare_engines(HostPool& pool, const HostSettings& host, Slots& builds, Logger& log);

// Objects labelled with this run that still exist, on every engine: "<engine>: container <name>".
std::vector<std::string> leak_audit(HostPool& pool, const std::string& run_id);

}  // namespace forge::sweep
