// A snapshot's compose services (docs/sweeps.md "Forks"): each service other than forgectl's own
// is paused, committed into an image (its filesystem) and its volumes read out as tars while it
// stands still, so what setup left in it can be swapped into every fork's stack.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/result.h"
#include "engine/client.h"
#include "stack/service_swap.h"
#include "stack/up.h"

namespace forge::trial {

struct ServiceCapture {
  std::string repo, tag;                      // each image is tagged "<repo>:<tag>-<service>"
  std::map<std::string, std::string> labels;  // the snapshot's labels (run, owner, source, key)
  std::size_t budget = 0;                     // the most file content all volumes together hold
};

// The services `keys` of `up` captured; their images removed again on any failure. A service with
// a mount a snapshot cannot hold (uncapturable_mount) or volumes past the budget is an error
// naming it (the task is then not forked).
Result<std::vector<stack::ServiceSwap>> capture_services(engine::Client& c, const stack::UpResult& up,
                                                         const std::vector<std::string>& keys, const ServiceCapture& o);

// "<tag>-<service>", cut to the 128 characters a tag may have.
std::string service_image_tag(const std::string& tag, const std::string& service);

}  // namespace forge::trial
