// failure_attribution.json in Tolokaforge's shape ({summary, failures[]}): why each graded trial
// that did not pass failed, by the first rule that matches, with the evidence that matched.
#pragma once

#include <functional>
#include <span>
#include <string>

#include "core/result.h"
#include "results/trial_detail.h"
#include "results/trial_record.h"

namespace forge::results::tolokaforge {

// The trial's trial.json when it has one (null: classify from the record alone: a merged shard
// without trial directories, an older run).
using DetailOf = std::function<const TrialDetail*(const TrialRecord&)>;

// Error text kept per evidence entry; longer is cut on a UTF-8 boundary.
inline constexpr std::size_t kEvidenceChars = 500;

// One agent's trials, each once. Only graded trials that did not pass are failures; infra errors
// are counted in the summary's "infra_errors" (they are not the model's), never classified.
Result<std::string> failure_attribution_json(std::span<const TrialRecord* const> trials, const DetailOf& detail_of);

}  // namespace forge::results::tolokaforge
