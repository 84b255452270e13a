// aggregate.json: the run's metrics overall, per agent and per (task, agent) (docs/metrics.md).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "results/trial_record.h"

namespace forge::results {

struct AggregateOptions {
  // The comparisons to make, each (a, b) for b − a; empty: every pair of agents.
  std::vector<std::pair<std::string, std::string>> compare;
  // The validity gate's threshold in % (validity.h); nullopt: write_reports takes run.json's
  // max_infra_rate, else the default 5 %.
  std::optional<double> max_infra_rate;
};

// {"valid": bool, "invalid_reason": text|null, "max_infra_rate": %, "overall": {…}, "by_agent": {agent: {…}},
// "by_task": {task_id: {agent: {…}}},
//  "by_slice": {"category"|"difficulty"|"tag": {value: {agent: {…}}}}, "comparisons": [...]},
// each {…} a Summary. "overall" pools every agent's trials: readers show it only for a run of one
// agent. Cheat canaries' trials (results/canary.h) are in none of these: with some, "canaries"
// follows (write_canaries_json). Same records, same bytes: keys in a fixed order, a seeded bootstrap. Fails only when a
// number is not finite (JSON cannot hold it).
Result<std::string> aggregate_json(const std::vector<TrialRecord>& trials, const AggregateOptions& options = {});

// Compact JSON text indented by 2 spaces with a final newline, every number's digits kept: how the
// run directory's JSON files are written for people to read.
std::string indented_json(const std::string& compact);

}  // namespace forge::results
