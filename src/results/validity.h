// Whether a run's results may be quoted: its infra errors within the run's --max-infra-rate. A
// degraded run (the daemon, the provider or the host failing trials) is marked INVALID in
// aggregate.json, run.json, report.html and the summary, never quoted as a result.
#pragma once

#include <string>
#include <vector>

#include "results/trial_record.h"

namespace forge::results {

// The threshold when neither `run --max-infra-rate` nor the run config's
// orchestrator.max_infra_rate says otherwise: 5 % of a run's trials.
inline constexpr double kDefaultMaxInfraRatePercent = 5.0;

struct RunValidity {
  bool valid = true;
  std::string reason;                                   // why it is invalid; empty when valid
  double max_infra_rate = kDefaultMaxInfraRatePercent;  // the threshold it was judged against, in %
};

// Invalid when the infra errors (Summary::infra_errors: trials outside every rate that are not
// invalid records) are more than `max_percent` % of the trials, over the whole run or over one
// agent's trials (an agent whose provider failed a third of its trials is degraded even when the
// others were fine). Exactly at the threshold is valid; no trials is valid (there is no result).
RunValidity run_validity(const std::vector<TrialRecord>& trials, double max_percent = kDefaultMaxInfraRatePercent);

}  // namespace forge::results
