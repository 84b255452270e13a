// How many trials at once this host can hold, and how many sandboxes ahead (the warm pool):
// file descriptors, subnets and memory against what one trial needs, checked before the first
// trial. A limit that fits fewer trials than asked lowers the concurrency with one message
// naming it; a limit that fits not even one refuses the run. Pure: admit() reads the host.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace forge::sweep {

// What the host has; nullopt where it cannot be read (that limit is not checked).
struct HostLimits {
  std::optional<std::uint64_t> nofile;             // RLIMIT_NOFILE (soft, after raising it to the hard limit)
  std::optional<std::uint64_t> mem_available_mib;  // MemAvailable, when the engine runs on this host
  std::optional<std::uint64_t> subnet_trials;      // trials the subnet pool fits at once, over all engines
  std::string subnet_note;                         // "the subnet pool 10.99.0.0/16 (1 network a trial)"
};

// What one trial holds while it runs or waits prepared.
struct TrialNeeds {
  int fds = 8;                  // measured: ~7 a trial at 32 at once (API connections, helper stream, json-db, model)
  int fds_base = 64;            // the run's own
  std::uint64_t rest_mib = 24;  // its containers at rest (measured), which must fit
  std::uint64_t limit_mib = 0;  // the sum of its containers' memory limits (0: unknown)
};

struct HostFit {
  int concurrency = 1;
  int pool = 0;                       // sandboxes ahead, within what is left
  std::vector<std::string> messages;  // one per limit that lowered the concurrency, or a warning
};

// `wanted` trials at once; `pool_wanted` ahead (-1: as many as the concurrency). Memory bounds
// trials in flight and held ahead by their size at rest (a paused sandbox keeps its memory);
// their limits only warn, since a limit is a ceiling most trials never reach.
Result<HostFit> fit_to_host(int wanted, int pool_wanted, const HostLimits& host, const TrialNeeds& need);

}  // namespace forge::sweep
