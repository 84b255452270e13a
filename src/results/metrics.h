// Run metrics over trial records: pass@k, pass^k, bootstrap intervals, percentiles, totals.
// Pure functions; aggregate.json and report.html are views of a Summary.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "results/trial_record.h"

namespace forge::results {

inline constexpr int kBootstrapResamples = 2000;
// Fixed so that the same records always give the same interval (aggregate.json is compared byte
// for byte across re-renders).
inline constexpr std::uint64_t kBootstrapSeed = 0x5eedf00dcafe2021ULL;
inline constexpr std::size_t kErrorMessageChars = 200;
inline constexpr std::size_t kTopErrorMessages = 10;

// Unbiased pass@k (Chen et al. 2021): the chance that at least one of k trials drawn without
// replacement from n, c of which passed, passes: 1 − C(n−c,k)/C(n,k). 0 when k > n.
double pass_at_k(int n, int c, int k);
// pass^k (tau-bench): the chance that all k drawn trials pass: C(c,k)/C(n,k). 0 when k > n.
double pass_hat_k(int n, int c, int k);

struct GroupCount {  // one (task, agent): graded trials and how many passed
  int n = 0;
  int c = 0;
};
struct KMean {
  double mean = 0;
  int groups = 0;  // groups with n >= k, the only ones averaged for this k
};
// For k = 1..max n, the mean over groups with n >= k (a group with fewer trials says nothing
// about k of them).
std::map<int, KMean> mean_pass_at_k(std::span<const GroupCount> groups);
std::map<int, KMean> mean_pass_hat_k(std::span<const GroupCount> groups);

struct Interval {
  double lo = 0;
  double hi = 0;
};
struct MeanCi {
  double mean = 0;
  Interval ci95;
};
// The mean of the strata's means (each task weighs the same, as in pass@k) with a 95% percentile
// bootstrap interval: each resample redraws every stratum's values with replacement, within the
// stratum. The task set is taken as fixed: the interval is trial-to-trial noise on these tasks,
// not uncertainty about other tasks. Empty strata are ignored; no values gives {0, [0, 0]}.
MeanCi stratified_mean_ci(const std::vector<std::vector<double>>& strata, int resamples = kBootstrapResamples,
                          std::uint64_t seed = kBootstrapSeed);

// The p-quantile (0..1), linear between closest ranks; 0 for no values.
double percentile(std::vector<double> xs, double p);

struct Latency {
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
};
Latency latency_of(std::vector<double> xs);

struct PhaseStats {
  int count = 0;  // trials that recorded the phase (older lines lack "reserve")
  double mean = 0, p50 = 0, p90 = 0;
};

struct MessageCount {
  std::string message;
  int count = 0;
};
// Messages cut to `chars` bytes (on a UTF-8 boundary), counted, most frequent first, then by text.
std::vector<MessageCount> top_messages(const std::vector<std::string>& messages, std::size_t limit = kTopErrorMessages,
                                       std::size_t chars = kErrorMessageChars);

// Everything aggregate.json says about one set of trials. Infra errors count in `trials` and
// `infra_errors` and in what was spent (tokens, cost, tool calls), never in pass rates, scores
// or latencies: they are not the model's doing.
struct Summary {
  int trials = 0, graded = 0, passed = 0, infra_errors = 0;
  // Records whose numbers cannot be counted (TrialRecord::invalid): outside every rate, apart
  // from the infra errors, their reasons in invalid_messages.
  int invalid = 0;
  double pass_rate = 0;                        // passed / graded, over trials
  std::map<int, KMean> pass_at_k, pass_hat_k;  // over (task, agent) groups
  MeanCi score;                                // stratified by (task, agent)
  MeanCi pass_at_1;                            // the same over pass (1) / fail (0): pass@1 with its interval
  std::int64_t tokens_input = 0, tokens_output = 0;
  double cost_usd = 0;
  int cost_unknown = 0;                      // trials with a call of unknown price: cost_usd is a lower bound when > 0
  Latency latency;                           // duration_s of graded trials: the agent phase only
  Latency wall;                              // finished_at − started_at of graded trials: every phase
  std::map<std::string, PhaseStats> phases;  // phases_s of graded trials
  std::int64_t tool_calls = 0, tool_errors = 0;
  double tool_error_rate = 0;                      // tool_errors / tool_calls
  std::map<std::string, int> termination_reasons;  // every trial
  std::vector<MessageCount> infra_error_messages;
  std::vector<MessageCount> invalid_messages;
  // The egress ledger (trials.jsonl's "egress"), over every trial: those that recorded one, those
  // whose ledger holds a blocked entry outside setup and grade (the agent tried a host it may not
  // reach), and the graded ones an egress rule failed (components.egress = 0).
  int egress_recorded = 0, egress_tried = 0, egress_failed = 0;
};

// finished_at − started_at, when both are readable.
std::optional<double> wall_seconds(const TrialRecord& t);

Summary summarize(std::span<const TrialRecord* const> trials);

}  // namespace forge::results
