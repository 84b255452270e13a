// A trial's env.yaml (the final state and files grading read, capped) and logs.yaml (what the
// trial did, when) in Tolokaforge's shapes, and what the trial keeps for them as it runs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "results/run_dir.h"
#include "trial/trial_result.h"

namespace forge::trial {

// What env.yaml and logs.yaml keep, whatever the trial produced.
inline constexpr std::size_t kEnvFileBytes = 64u << 10;  // per file; the rest is cut, and said so
inline constexpr std::size_t kEnvFilesBytes = 1u << 20;  // all files' content together
inline constexpr std::size_t kEnvFileCount = 1000;       // files listed
inline constexpr std::size_t kEnvStateBytes = 4u << 20;  // the state's tables, kept whole or left out
inline constexpr std::size_t kMaxTrialEvents = 5000;     // logs.yaml's entries; one more says the rest were dropped

// Adds what grading read to t.graded_files (once per path), within the caps above.
void keep_graded_files(TrialResult& t, const std::vector<grading::WorkspaceFile>& files);
// Appends one logs.yaml entry stamped now; past kMaxTrialEvents only a single "dropped" entry.
void add_event(TrialResult& t, std::string level, std::string module, std::string message,
               std::map<std::string, std::string> context = {});

// The files' YAML text, redacted, control characters made visible (yaml_text.h).
std::string env_yaml(const TrialResult& t, const results::Redactor& redact);
std::string logs_yaml(const TrialResult& t, const results::Redactor& redact);

}  // namespace forge::trial
