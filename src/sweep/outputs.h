// Writes a run directory in Tolokaforge's layout (reference/tolokaforge.md §5.5) plus forgectl's
// trials.jsonl: every file redacted, trial files written atomically, trials.jsonl appended and
// flushed to disk one trial at a time.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "core/result.h"
#include "sweep/trial_result.h"

namespace forge::sweep {

// Masks secret values (API keys loaded on the host) and sensitive keys before anything is written.
using Redactor = std::function<std::string(std::string_view)>;

class RunWriter {
 public:
  static Result<RunWriter> open(const std::string& dir, Redactor redact);
  const std::string& dir() const { return dir_; }

  // trials/<task>/<idx>/{trajectory,grade,metrics,env,task}.yaml, then one line in trials.jsonl.
  Status write_trial(const TrialResult& t, const std::string& task_yaml_summary);
  Status write_run_json(const std::string& json_text);

  // The JSON object trials.jsonl gets for `t` (also used by resume and reports).
  std::string trial_line(const TrialResult& t) const;

 private:
  RunWriter(std::string dir, Redactor r) : dir_(std::move(dir)), redact_(std::move(r)) {}
  std::string dir_;
  Redactor redact_;
  std::shared_ptr<std::mutex> mu_ = std::make_shared<std::mutex>();
};

// Writes `text` to `path` atomically (temp file, fsync, rename).
Status write_file_atomic(const std::string& path, std::string_view text);

}  // namespace forge::sweep
