// A fork's services (docs/sweeps.md "Forks"): a compose service whose set-up state was committed
// into an image (its filesystem) and read out as tars (its volumes) is replaced, in a running
// stack, by a container of that image with the same plan — networks, aliases, addresses,
// hardening, labels — its volumes seeded before it starts.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "engine/client.h"
#include "stack/up.h"

namespace forge::stack {

struct VolumeSeed {
  std::string target;  // the volume's path in the container
  std::string tar;     // its content, entries relative to `target`
};

struct ServiceSwap {
  std::string key;    // the plan's service key
  std::string image;  // the committed set-up image
  std::vector<VolumeSeed> volumes;
};

struct SwapOptions {
  Millis health_timeout{120000};
  const std::atomic<int>* interrupted = nullptr;
};

// The swaps in dependency order: a service whose depends_on names another swapped one comes after it.
std::vector<ServiceSwap> in_dependency_order(const policy::StackPlan& plan, std::vector<ServiceSwap> swaps);

// Each service's container removed (with its anonymous volumes) and made again from its swap's
// image, on the same plan; its volumes written through the archive API before it starts, so the
// seeded content wins over what Docker copies into a fresh volume from the image; started and,
// with a healthcheck, waited for as up does. `up.containers` names the new containers. Called
// before any agent process, so the sandbox watch never sees the old ones.
Status swap_services(engine::Client& c, UpResult& up, std::vector<ServiceSwap> swaps, const SwapOptions& o);

}  // namespace forge::stack
