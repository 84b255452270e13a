// Golden replay against the trial's StateStore, with the agent's state restored afterwards.
#include "grading/replay.h"

#include <utility>

#include "core/scope_guard.h"
#include "grading/component.h"
#include "grading/diff.h"

namespace forge::grading {

namespace {

std::string short_hash(const std::string& h) { return h.substr(0, 12); }

struct Golden {
  std::optional<std::string> hash, state;  // absent when the replay could not produce them
};

// Snapshot, reset, replay, hash, restore. Problems go to `reasons`; the restore always runs once
// the snapshot exists, because every later reader of the store expects the agent's state.
Golden replay_golden(const manifest::HashCheck& hash, StateStore& store, std::vector<std::string>& reasons) {
  Golden g;
  if (auto s = store.snapshot(kFinalSnapshot); !s) {
    reasons.push_back("state_checks: hash ERROR: cannot snapshot the agent's final state, golden replay not run: " +
                      s.error().what());
    return g;
  }
  ScopeGuard restore([&] {
    if (auto r = store.restore(kFinalSnapshot); !r)
      reasons.push_back("state_checks: hash ERROR: cannot restore the agent's final state after golden replay: " +
                        r.error().what());
  });
  if (auto r = store.reset(); !r) {
    reasons.push_back("state_checks: hash ERROR: cannot reset the state for golden replay: " + r.error().what());
    return g;
  }
  const std::size_t n = hash.golden_actions.size();
  for (std::size_t i = 0; i < n; ++i) {
    const auto& a = hash.golden_actions[i];
    // Tolokaforge collects replay errors and goes on: a later action may still reach the state.
    if (auto r = store.replay(a.name, a.arguments_json); !r)
      reasons.push_back("state_checks: golden replay error: action " + std::to_string(i + 1) + "/" + std::to_string(n) +
                        " " + quote(a.name, 80) + ": " + r.error().what());
  }
  if (auto h = store.stable_hash())
    g.hash = *h;
  else
    reasons.push_back("state_checks: hash ERROR: cannot hash the golden state: " + h.error().what());
  if (auto s = store.stable_state_json())
    g.state = *s;
  else
    reasons.push_back("state_checks: hash note: cannot read the golden state, no diff: " + s.error().what());
  return g;
}

}  // namespace

HashOutcome check_state_hash(const manifest::HashCheck& hash, StateStore* store) {
  HashOutcome out;
  auto verdict_fail = [&](const std::string& why) {
    out.score = 0;
    out.reasons.push_back("state_checks: hash FAIL: " + why);
    return out;
  };
  if (!store) return verdict_fail("hash.enabled but the trial has no state store (json-db)");
  auto agent_hash = store->stable_hash();
  if (!agent_hash) return verdict_fail("cannot hash the agent's final state: " + agent_hash.error().what());
  auto agent_state = store->stable_state_json();

  // With only expected_state_hash there is nothing to replay, hence nothing to diff against.
  Golden golden;
  if (!hash.expected_state_hash || !hash.golden_actions.empty()) golden = replay_golden(hash, *store, out.reasons);

  std::string expected;
  if (hash.expected_state_hash) {
    expected = *hash.expected_state_hash;
    if (golden.hash && *golden.hash != expected)
      out.reasons.push_back("state_checks: hash note: the golden replay hash " + short_hash(*golden.hash) +
                            " differs from expected_state_hash " + short_hash(expected) +
                            "; expected_state_hash decides");
  } else if (golden.hash) {
    expected = *golden.hash;
  } else {
    return verdict_fail("no expected hash: the golden replay did not complete");
  }

  if (*agent_hash == expected) {
    out.score = 1;
    out.reasons.push_back("state_checks: hash match (" + short_hash(expected) + ")");
    return out;
  }
  out.score = 0;
  std::string detail = "state_checks: hash mismatch (agent " + short_hash(*agent_hash) + ", expected " +
                       short_hash(expected) + ")";
  if (golden.state && agent_state) {
    if (auto d = diff_states(*golden.state, *agent_state)) {
      out.state_diff_json = d->json;
      detail += ": " + d->summary;
    } else {
      detail += "; no diff: " + d.error().what();
    }
  } else if (!agent_state) {
    detail += "; no diff: cannot read the agent's final state: " + agent_state.error().what();
  } else {
    detail += "; no diff: no golden state to compare with";
  }
  out.reasons.push_back(std::move(detail));
  return out;
}

}  // namespace forge::grading
