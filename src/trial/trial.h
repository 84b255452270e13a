// One trial as named phases — reserve, up, setup, agent, grade, down — each ending in a typed
// outcome: graded (the model's result), infra_error(kind) (not the model's doing: retried in a
// fresh sandbox) or setup_error (deterministic: stops the run). Teardown always runs.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "agent/budget.h"
#include "agent/early_turn.h"
#include "agent/llm_client.h"
#include "core/host_settings.h"
#include "core/pace.h"
#include "core/slots.h"
#include "engine/client.h"
#include "engine/system.h"
#include "manifest/run_config.h"
#include "manifest/task_config.h"
#include "stack/background_teardown.h"
#include "tools/local_guard.h"
#include "trial/agent_choice.h"
#include "trial/golden_cache.h"
#include "trial/snapshot_cache.h"
#include "trial/trial_result.h"

namespace forge::trial {

// Resolves a model key ("agent", "user", "judge", or a grading model_ref) to a client.
using ModelResolver = std::function<Result<std::shared_ptr<agent::LlmClient>>(const std::string& key)>;

// A sweep's limits on work its trials share: at most so many at once of each kind. Stack
// creation and teardown given as kAdaptive follow what the daemon sustains (core/slots.h): from
// 4 at once, between 2 and `adaptive_max`.
struct Admission {
  static constexpr int kAdaptive = -1;
  Admission(int builds, int ups, int downs, int execs, int grades, int adaptive_max = 32)
      : build(builds), up(gate(ups, adaptive_max)), down(gate(downs, adaptive_max)), exec(execs), grade(grades) {}
  Slots build, up, down, exec, grade;  // each 0: no limit beyond the concurrency
  // --max-up-rate: stacks started per second, once an up slot is held (none set: no pace).
  Pace up_pace;

 private:
  static Slots gate(int n, int max) {
    if (n == kAdaptive) return Slots(AdaptiveLimit{4, 2, std::max(2, max)});
    return Slots(n);
  }
};

// What a running trial reports to the sweep's live view: the phase it is in, and the tool calls
// so far. Reported on entering each phase and after each tool call; `tool_error` is set only on
// the report of a call that failed ("tool: reason").
struct TrialProgress {
  std::string phase;  // reserve | up | setup | tools | agent | grade | down
  int tool_calls = 0, tool_errors = 0;
  std::string tool_error;
};

struct TrialEnv {
  engine::Client* docker = nullptr;
  const engine::SystemInfo* engine_info = nullptr;  // the engine's /info, asked once per sweep; null: each up asks
  HostSettings host = HostSettings::defaults();
  const manifest::RunConfig* run = nullptr;
  ModelResolver models;
  std::shared_ptr<agent::Budget> budget;
  std::string run_id;
  Logger* log = nullptr;
  const std::atomic<int>* interrupted = nullptr;
  Admission* admission = nullptr;  // null: no limits
  // The engine runs on this host (unix socket): json-db is reached from the host directly;
  // otherwise through the runner.
  bool engine_is_local = true;
  // The local executor (local_trial.h): each trial's sandbox directory goes under local_root
  // (DIR/local) and is removed after grading unless keep_local; the run's one warning (null: a
  // trial's own, before its first host command).
  std::string local_root;
  bool keep_local = false;
  std::shared_ptr<tools::LocalWarning> local_warning;
  // Called from the trial's threads (serialised per trial); empty: nobody is watching.
  std::function<void(const TrialProgress&)> on_progress;
  // Where the trial hands its stack once it is graded (null: it removes it itself, holding a
  // `down` slot). The sweep drains it before its leak audit.
  stack::BackgroundTeardown* teardown = nullptr;
  // The priority of the up phase's wait for a stack-creation slot: kAhead for a trial prepared
  // ahead of its turn (prepare_trial), which yields to every trial waiting now.
  Slots::Priority up_priority = Slots::Priority::kNow;
  // The run's golden states (golden_cache.h), shared by its trials; null: each trial replays its own
  // (--no-golden-cache).
  std::shared_ptr<GoldenCache> golden_cache;
  // The run's set-up snapshots (snapshot_cache.h), shared by its trials; null: every trial runs
  // its own setup (--no-fork).
  std::shared_ptr<SnapshotCache> snapshots;
  // The trial's directory in the run (DIR/trials/<rel>), where its screenshots are written as the
  // agent takes them; empty: they are kept nowhere (tests, a trial without a run directory).
  std::string record_dir;
};

// An LLM agent's first model turn, started before its trial's sandbox is ready (docs/sweeps.md
// "The first wave"): by the trial itself when it brings up its own sandbox, or by the sweep when
// the trial's turn comes while the warm pool still prepares its sandbox.
struct FirstTurn {
  std::shared_ptr<agent::Agent> agent;     // the episode's agent: the turn was asked of it
  std::unique_ptr<agent::EarlyTurn> turn;  // its call, running or answered
};

// Starts the first turn of trial `trial_index` when its request depends on nothing the sandbox
// makes (an LLM agent, built-in tools only, a prompt and first message from the task); null
// otherwise, and the trial keeps today's order.
std::unique_ptr<FirstTurn> start_first_turn(const manifest::TaskConfig& task, int trial_index,
                                            const AgentChoice& choice, const TrialEnv& env);

// `first`: the agent's first turn, asked already (first_turn.h); null: the trial asks it ahead of
// its sandbox itself when it may.
TrialResult run_trial(const manifest::TaskConfig& task, int trial_index, int attempt, const AgentChoice& agent,
                      TrialEnv& env, std::unique_ptr<FirstTurn> first = nullptr);

// One trial's first phases run ahead of its turn by the sweep's warm pool: its sandbox up, its
// initial state in, its tools open and its helper started; then, when frozen, every container
// of its stack paused (the cgroup freezer: no CPU while it waits, its memory kept). It is made
// for one trial of one task and agent and is never reused: finish_trial runs it once; one never
// finished is torn down with its sandbox when destroyed.
class PreparedTrial {
 public:
  struct Impl;
  explicit PreparedTrial(std::unique_ptr<Impl> impl);
  ~PreparedTrial();
  PreparedTrial(const PreparedTrial&) = delete;
  PreparedTrial& operator=(const PreparedTrial&) = delete;
  // Pauses the stack's containers (idle until its turn); false, with the stack left running,
  // when the daemon refused.
  bool freeze();
  bool frozen() const;
  std::unique_ptr<Impl> impl;
};

// Runs up → setup → tools for trial `trial_index` of `task` with `agent` (env is copied: its
// docker, admission and settings are used; on_progress is set at the turn). An error when any
// phase failed: its sandbox is already handed to teardown, and the trial runs as usual in a
// sandbox of its own.
Result<std::unique_ptr<PreparedTrial>> prepare_trial(const manifest::TaskConfig& task, int trial_index,
                                                     const AgentChoice& agent, const TrialEnv& env);
// Its turn: the stack thawed, then agent → grade → down, as run_trial. The phases run ahead are
// recorded as ahead_reserve, ahead_up, ahead_setup; `thaw` is the unpause.
TrialResult finish_trial(std::unique_ptr<PreparedTrial> p, int attempt,
                         std::function<void(const TrialProgress&)> on_progress, std::unique_ptr<FirstTurn> first = nullptr);

}  // namespace forge::trial
