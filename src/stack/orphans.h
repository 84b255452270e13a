// Reaping what dead owners left: `down --orphans`, and every sweep before its first trial.
#pragma once

#include <string>
#include <vector>

#include "core/host_settings.h"
#include "engine/client.h"
#include "stack/inventory.h"
#include "stack/teardown.h"

namespace forge::stack {

struct ReapedStack {
  std::string name;
  OrphanReason why = OrphanReason::kNone;
  TeardownReport removed;
};

struct ReapReport {
  std::vector<ReapedStack> stacks;       // orphans, removed (see removed.errors)
  std::vector<std::string> unowned;      // stacks no object names an owner or lease for: named, kept
  std::size_t reservations = 0;          // subnet reservations of dead owners dropped
  std::vector<std::string> snapshots;    // set-up snapshot images of dead owners, removed
  std::vector<std::string> stale_rules;  // stacks whose host rules outlived their bridges, removed
  std::vector<std::string> errors;       // listing or pruning that failed, named
  bool listed = false;                   // the daemon's stacks could be listed (else errors says why)
};

// Removes every orphaned stack on the daemon (orphan_reason), drops the subnet reservations of
// owners that are gone (host.state_dir) and, where the daemon is local and the host firewall on,
// the host rules whose bridge is gone. Unowned stacks are reported, never removed. `settle`: how
// long to keep looking for what the daemon was still creating for a dead owner (it finishes a
// request whose client died: a container in a removed stack, or a stack's network the first
// listing missed); zero leaves such a late one to the next reaper.
ReapReport reap_orphans(engine::Client& c, const HostSettings& host, Millis settle = Millis(0));

// `down --snapshots`: every snapshot image kept past its run (run --keep-snapshots,
// kLabelSnapshotKey) removed from the daemon, which reaping never does.
struct KeptSnapshotsRemoval {
  std::vector<std::string> removed;  // image ids
  std::vector<std::string> errors;
};
KeptSnapshotsRemoval remove_kept_snapshots(engine::Client& c);

}  // namespace forge::stack
