// What forgectl stacks exist on a daemon: their objects, owners and whether they are orphans.
#pragma once

#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/containers.h"
#include "engine/networks.h"
#include "engine/volumes.h"
#include "stack/labels.h"

namespace forge::stack {

struct StackObjects {
  std::string name;
  std::vector<engine::ContainerSummary> containers;
  std::vector<engine::NetworkInfo> networks;
  std::vector<engine::VolumeInfo> volumes;  // left over with the stack's label (a container's go with it)
  StackOwnership ownership;                 // from every object's labels
  // The stack-wide labels (run, policy, source, mode): from whichever objects carry them.
  std::map<std::string, std::string> labels;
  std::int64_t created = 0;  // earliest container creation, unix seconds
};

// Every subnet the daemon's networks use (forgectl's or not): what the subnet pool must avoid.
Result<std::vector<std::string>> daemon_subnets(engine::Client& c);

// Every forgectl stack on the daemon, by name; or just `only` when given.
Result<std::map<std::string, StackObjects>> list_stacks(engine::Client& c, std::string_view only = {});
// Adds one object's labels to the stack they name in `stacks`; the stack, or null for an object
// that names none. (list_stacks' fold, apart for the unit tests.)
StackObjects* add_object(std::map<std::string, StackObjects>& stacks, const std::map<std::string, std::string>& labels);

// kUnowned is no orphan: no object names an owner or a lease (made by hand, or by a forgectl from
// before every object carried them), so nothing tells whether someone uses it. ps and down
// --orphans name it; only `down STACK` removes it.
enum class OrphanReason { kNone, kLeaseExpired, kOwnerGone, kUnfinished, kUnowned };
const char* orphan_reason_text(OrphanReason r);
// The reasons `down --orphans` (and a sweep's start) removes a stack for.
bool is_orphan(OrphanReason r);
// Decided from all of the stack's objects. Any object whose owner is alive keeps the stack; an
// owner on another host (liveness unknown) leaves it to the lease. Otherwise the stack is an
// orphan when its lease expired, or its owners are gone and either meant to hold it (attached:
// a sweep) or never finished bringing it up (no running runner). A finished detached stack
// within its lease is never one.
OrphanReason orphan_reason(const StackObjects& s, std::time_t now);

}  // namespace forge::stack
