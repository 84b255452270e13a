// What forgectl stacks exist on a daemon: their objects, owners and whether they are orphans.
#pragma once

#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/containers.h"
#include "engine/networks.h"
#include "stack/labels.h"

namespace forge::stack {

struct StackObjects {
  std::string name;
  std::vector<engine::ContainerSummary> containers;
  std::vector<engine::NetworkInfo> networks;
  StackOwnership ownership;  // from the objects' labels
  std::map<std::string, std::string> labels;  // of the first object seen (policy, source, run)
  std::int64_t created = 0;  // earliest container creation, unix seconds
};

// Every subnet the daemon's networks use (forgectl's or not): what the subnet pool must avoid.
Result<std::vector<std::string>> daemon_subnets(engine::Client& c);

// Every forgectl stack on the daemon, by name; or just `only` when given.
Result<std::map<std::string, StackObjects>> list_stacks(engine::Client& c, std::string_view only = {});

enum class OrphanReason { kNone, kLeaseExpired, kOwnerGone, kUnfinished };
const char* orphan_reason_text(OrphanReason r);
// A stack is an orphan when its lease expired, or its owner process is gone and either the
// owner meant to hold it (attached: a sweep) or never finished bringing it up (no running
// runner). A live owner's stack, or a finished detached stack within its lease, is never one.
OrphanReason orphan_reason(const StackObjects& s, std::time_t now);

}  // namespace forge::stack
