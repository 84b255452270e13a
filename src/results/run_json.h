// run.json: one struct with one writer and one reader. `forgectl run` writes it when the plan is
// made and again at the end; `merge` writes a merged one; `report`, `merge` and `--resume` read it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace forge::results {

// How the run was started, so `forgectl run --resume --out DIR` alone continues it exactly:
// absolute paths, the same agents, trials, concurrency, limits and engines.
struct RunInvocation {
  std::vector<std::string> task_paths;  // absolute
  std::vector<std::string> agents;      // as given: "oracle", "llm:judge", …
  std::vector<std::string> docker_hosts;
  std::string config;                   // absolute path of --config, or empty
  std::string shard;                    // "i/N" or empty
  int trials = 0;
  int concurrency = 0;
  std::map<std::string, int> limits;    // admission limits: builds, ups, downs, execs, grades
  std::string executor;                 // --executor: "container" (also when absent) | "local"
  bool keep_local = false;              // --keep-local
  bool allow_local = false;             // --allow-local
  std::vector<std::string> env_passthrough;  // --env-passthrough: names only, never values
  std::string harbor_verifier;               // --harbor-verifier: "separate" (also when absent) | "shared"
  bool no_golden_cache = false;              // --no-golden-cache (written only when set)
  std::string runtime;                       // --runtime (written only when set)
  std::optional<double> max_infra_rate;      // --max-infra-rate in % (written only when given)
  bool canary = false;                       // --canary (written only when set)
  bool no_fork = false;                      // --no-fork (written only when set)
  bool keep_snapshots = false;               // --keep-snapshots (written only when set)
  std::string max_up_rate;                   // --max-up-rate as given ("2", "0.5"; written only when given)
};

struct RunModel {
  std::string provider, name, base_url;
  double temperature = 0;
};

struct RunSummaryJson {
  int planned = 0, finished = 0, graded = 0, passed = 0, infra_errors = 0, interrupted = 0, concurrency_used = 0;
  double cost_usd = 0;
  std::string stopped;  // why the run stopped early; empty: it did not
  // The validity gate (validity.h) over the finished trials; invalid_reason empty when valid.
  bool valid = true;
  std::string invalid_reason;
};

// The network one phase of a task's trials ran under, as forgectl enforced it: "no_internet",
// "limited_internet" (with its allowlist), "full_internet", "none" (no network at all) or "host"
// (the local executor: tools on this host, nothing enforced).
struct PhaseNetwork {
  std::string policy;
  std::vector<std::string> allowlist;  // limited_internet only
};

// Per task: the setup, agent and grade phases' networks (docs/sweeps.md "run.json").
struct TaskNetworks {
  PhaseNetwork setup, agent, grade;
};

// The enforcement probe (docs/sweeps.md "The enforcement probe"): one check and what it saw.
struct ProbeCheck {
  std::string name;      // "unlisted name refused", "no route out", "host unreachable"
  bool passed = false;
  std::string observed;  // what the probe saw (or why the check was skipped)
};

// One policy's probe on one engine, before the run's first trial.
struct ProbeRecord {
  std::string policy, engine;
  bool passed = false;
  std::vector<ProbeCheck> checks;
  std::string error;     // the probe could not run (its stack did not come up): the reason
  std::int64_t took_ms = 0;
};

struct MergedSource {
  std::string path, run_id, shard, config_hash;
  int trials = 0;
};

struct RunJson {
  std::string run_id, forgectl_version, started_at, finished_at;
  std::string status;  // running | completed | interrupted | stopped | merged
  std::string config_hash;
  std::vector<std::string> agents;  // labels
  int trials_per_task = 0;
  int concurrency = 0;
  // The trials this run (this shard) plans, known from its start (the summary only at its end):
  // `forgectl slurm status` counts progress against it. -1 when absent (older runs, merged ones).
  int planned = -1;
  std::string shard, docker_engine;
  // Where the run's tools ran: "container", "local" (the local executor, on this host) or "mixed".
  std::string executor;
  std::vector<std::string> engines;
  std::map<std::string, std::string> images;  // ref → id
  RunInvocation invocation;
  std::map<std::string, RunModel> models;
  // max_turns, episode_timeout_s, turn_timeout_s, max_attempt_retries (numbers), max_budget_usd
  std::map<std::string, double> limits;
  // The threshold of the validity gate in %, as this run applied it (flag, run config or default);
  // report and merge judge validity against it. nullopt: an older run.json (the default applies).
  std::optional<double> max_infra_rate;
  std::map<std::string, TaskNetworks> networks;  // task id → its phases' networks
  std::vector<ProbeRecord> egress_probe;          // per closed policy the run uses, before its trials
  std::optional<RunSummaryJson> summary;
  std::optional<std::vector<std::string>> leaks;  // leak audit: objects left; empty: clean
  std::vector<MergedSource> merged_from;           // status merged only
  std::string merged_at;

  std::string to_json() const;
  // Lenient about fields older versions did not write; `path` names the file in errors.
  static Result<RunJson> parse(std::string_view text, std::string_view path);
  static Result<RunJson> read(const std::string& path);
};

}  // namespace forge::results
