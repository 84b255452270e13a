// What one finished trial leaves: the episode, its grade, its metrics, and how it went.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/episode.h"
#include "grading/evidence.h"
#include "tools/executor.h"

namespace forge::sweep {

// An infra failure (daemon error, sandbox died, provider down after retries) is retried with a
// fresh sandbox and never counts as a model failure; everything else is the model's outcome.
enum class Outcome { kGraded, kInfraError };

struct ToolLogEntry {
  std::string requestor;  // "assistant" | "user"
  tools::CallRecord record;
};

struct TrialResult {
  std::string task_id;
  int trial_index = 0;
  int attempt = 1;
  std::string agent;  // "llm:openai/gpt-4o" | "oracle" | …
  Outcome outcome = Outcome::kGraded;
  std::string error;  // infra failures and model errors, redacted
  agent::Episode episode;
  std::vector<ToolLogEntry> tool_log;
  grading::Grade grade;
  std::string final_state_json = "{}";  // {"db": …}
  std::map<std::string, std::string> initial_files;  // path → content (env.yaml)
  double judge_cost_usd = 0;
  std::string started_at, finished_at;  // ISO 8601 UTC
  std::map<std::string, Millis> phases;  // reserve, up, agent, grade, down
  std::string stack;
  bool stops_run = false;  // a provider key/account/model problem: no retry, no further trials
  std::string infra_kind;  // for infra errors: daemon | provider | sandbox | oom | interrupted
  // Set by the sweep: identity across runs, where it ran, and where its files go under trials/.
  std::string trial_key, docker_host;
  std::string rel_dir;  // "<task>/<idx>" (default) or "<task>/<agent>/<idx>" when a run has several agents
};

}  // namespace forge::sweep
