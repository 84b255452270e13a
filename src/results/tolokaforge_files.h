// A run directory's Tolokaforge-compatible run-level files under DIR/tolokaforge/ (one agent) or
// DIR/tolokaforge/<agent>/ (several): aggregate.json, per_task_metrics.json, metadata_slices.json
// and failure_attribution.json, derived from trials.jsonl (and trial.json) like aggregate.json.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "results/trial_record.h"

namespace forge::results {

inline constexpr const char* kTolokaforgeDir = "tolokaforge";

// "oracle" → "oracle"; "llm:openai/gpt-4o" → "llm-openai-gpt-4o": the agent's directory name.
std::string tolokaforge_agent_dir(const std::string& agent);

// Writes the four files of each agent, each atomically.
Status write_tolokaforge_files(const std::string& dir, const std::vector<TrialRecord>& trials);

}  // namespace forge::results
