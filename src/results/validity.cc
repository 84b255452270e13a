// The run validity gate: infra errors against --max-infra-rate.
#include "results/validity.h"

#include <cmath>
#include <cstdio>
#include <map>

#include "results/metrics.h"

namespace forge::results {

namespace {

std::string percent_text(double v, const char* format) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// The reason when `sel`'s infra errors pass the threshold; empty when they do not.
std::string exceeded(std::span<const TrialRecord* const> sel, double max_percent) {
  Summary s = summarize(sel);
  if (s.trials == 0) return {};
  const double rate = 100.0 * s.infra_errors / s.trials;
  if (rate <= max_percent) return {};
  return "infra errors " + std::to_string(s.infra_errors) + " of " + std::to_string(s.trials) + " trials (" +
         percent_text(rate, "%.1f") + " %) exceed --max-infra-rate " + percent_text(max_percent, "%g") + " %";
}

}  // namespace

RunValidity run_validity(const std::vector<TrialRecord>& trials, double max_percent) {
  RunValidity v;
  v.max_infra_rate = max_percent;
  std::vector<const TrialRecord*> all;
  std::map<std::string, std::vector<const TrialRecord*>> by_agent;
  for (const auto& t : trials) {
    all.push_back(&t);
    by_agent[t.agent].push_back(&t);
  }
  v.reason = exceeded(all, max_percent);
  // With one agent its check is the run's; with several, the first degraded agent names itself.
  if (v.reason.empty() && by_agent.size() > 1)
    for (const auto& [agent, sel] : by_agent)
      if (std::string why = exceeded(sel, max_percent); !why.empty()) {
        v.reason = "agent " + agent + ": " + why;
        break;
      }
  v.valid = v.reason.empty();
  return v;
}

}  // namespace forge::results
