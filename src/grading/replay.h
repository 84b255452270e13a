// Golden replay: the state hash check of state_checks (hash.enabled).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "grading/evidence.h"
#include "manifest/grading_config.h"

namespace forge::grading {

// The snapshot that holds the agent's final state while the golden actions replay.
inline constexpr const char* kFinalSnapshot = "forgectl-final";

struct HashOutcome {
  double score = 0;                  // 1 when the agent's stable hash equals the expected one
  std::vector<std::string> reasons;  // "state_checks: hash …", replay errors, restore problems
  std::string state_diff_json;       // diff_states(golden, agent) when the hashes differ
};

// Takes the agent's stable hash, then (unless only expected_state_hash is given): snapshots
// kFinalSnapshot, resets, replays each golden action through StateStore::replay (an error is
// reported and the replay goes on), takes the golden hash and state, and restores the snapshot
// whatever happened. The expected hash is expected_state_hash when given, else the golden one.
// Anything that prevents a verdict (no store, a failed hash, snapshot or reset) scores 0 with
// the reason; the agent's state is never reset without a snapshot to restore it from.
HashOutcome check_state_hash(const manifest::HashCheck& hash, StateStore* store);

}  // namespace forge::grading
