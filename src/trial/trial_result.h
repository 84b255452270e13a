// What one finished trial leaves: the episode, its grade, its metrics, and how it went.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/episode.h"
#include "core/egress_entry.h"
#include "grading/evidence.h"
#include "results/outcome.h"
#include "tools/executor.h"

namespace forge::trial {

struct ToolLogEntry {
  std::string requestor;  // "assistant" | "user"
  tools::CallRecord record;
};

// One line of logs.yaml: something the trial did, when (ISO 8601 UTC), how serious
// ("INFO" | "WARNING" | "ERROR"), which part of forgectl ("trial" | "tools" | "grading").
struct TrialEvent {
  std::string timestamp, level, module, message;
  std::map<std::string, std::string> context;
};

// How a trial had its golden state (Python tool servers; trials.jsonl's "golden"): computed once
// for the run, reused, or replayed on its own; the content key it was keyed by, and how many golden
// replays the trial ran.
struct GoldenUse {
  std::string source;  // computed | reused | replayed; empty: no golden replay
  std::string key;
  int replays = 0;
};

struct TrialResult {
  std::string task_id;
  int trial_index = 0;
  int attempt = 1;
  std::string agent;  // "llm:openai/gpt-4o" | "oracle" | …
  results::Outcome outcome = results::Outcome::kGraded;
  results::InfraKind infra_kind = results::InfraKind::kNone;  // for infra errors
  std::string error;  // why it was not graded, or the model's own error; redacted when written
  agent::Episode episode;
  std::vector<ToolLogEntry> tool_log;
  grading::Grade grade;
  std::string final_state_json = "{}";  // {"db": …}
  std::map<std::string, std::string> initial_files;  // path → content (env.yaml)
  std::string mock_web_url;  // the task's initial_state.mock_web.base_url (env.yaml), when it has one
  // The workspace files grading read (its path_glob checks), by path, as grading read them, capped
  // (keep_graded_files): env.yaml's filesystem.
  std::map<std::string, grading::WorkspaceFile> graded_files;
  std::size_t graded_bytes = 0;  // content kept in graded_files
  std::vector<TrialEvent> events;  // logs.yaml, at most kMaxTrialEvents
  double judge_cost_usd = 0;
  std::string started_at, finished_at;  // ISO 8601 UTC
  std::map<std::string, Millis> phases;  // reserve, up, agent, grade, down
  std::string stack;
  // Phase → the network policy it ran under ("setup", "agent", "grade"; "none", "host"): the agent's
  // written once the runner is verified on it (trials.jsonl "networks").
  std::map<std::string, std::string> networks;
  std::string runtime;  // the runner's OCI runtime as the daemon names it ("runc", "runsc"); empty: local executor
  // egress.jsonl: every DNS query to the trial's resolver and request through its proxy; nullopt
  // for a trial with neither (full_internet, no network). Read as grading starts (grading's
  // `egress` rules read it: TrialRun::evidence), then whole, grade phase included, at down.
  std::optional<EgressLedger> egress;
  // A Harbor task's /logs/agent, /logs/artifacts and /logs/verifier as tars ("agent/…", …), written
  // under the trial's logs/; its verifier's exit code and output (capped).
  std::vector<std::string> log_tars;
  int verifier_exit_code = -1;
  std::string verifier_output;
  // Its tools ran on the local executor: on the host, outside any container (trials.jsonl's "unconfined").
  bool unconfined = false;
  // The agent's screenshots written under the trial's directory as taken, and those dropped past
  // the record's limits (results/screenshots.h).
  int screenshots = 0, screenshots_dropped = 0;
  GoldenUse golden;
  // Its starting state, when setup was forked (snapshot.h): "taken" or "forked", the snapshot
  // image's id and the starting workspace's SHA-256 (workspace_hash); empty: setup ran unforked.
  std::string snapshot_source, snapshot_image, workspace_sha256;
  // Stopped by SIGINT/SIGTERM before it could end: no result at all; the sweep leaves it for --resume.
  bool interrupted = false;
  // No further trials: a setup error, or a provider key/account/model problem.
  bool stops_run = false;
  // Set by the sweep: identity across runs, where it ran, and where its files go under trials/.
  std::string trial_key, docker_host;
  std::string rel_dir;  // "<task>/<idx>" (default) or "<task>/<agent>/<idx>" when a run has several agents
  // Also set by the sweep, from the task: its name and labels, for the report's slices.
  std::string task_name, category, difficulty;
  std::vector<std::string> tags, expected_failure_modes;
};

}  // namespace forge::trial
