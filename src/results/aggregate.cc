// aggregate.json, written from Summaries in a fixed key order.
#include "results/aggregate.h"

#include <cmath>
#include <map>

#include "core/json.h"
#include "results/canary.h"
#include "results/compare.h"
#include "results/metrics.h"
#include "results/validity.h"

namespace forge::results {

namespace {

// Rates, scores and seconds to 6 places: more is noise, and it keeps the file readable.
double round6(double v) { return std::round(v * 1e6) / 1e6; }

// json::Writer plus a check that every number is finite: RapidJSON would silently write an
// invalid document for NaN or infinity.
class SummaryWriter {
 public:
  json::Writer& w() { return w_; }
  SummaryWriter& num(std::string_view key, double v) {
    if (!std::isfinite(v) && bad_.empty()) bad_ = std::string(key);
    w_.key(key).num(std::isfinite(v) ? v : 0);
    return *this;
  }
  SummaryWriter& num_or_null(std::string_view key, double v, bool present) {
    if (present) return num(key, v);
    w_.key(key).null();
    return *this;
  }
  const std::string& bad() const { return bad_; }

 private:
  json::Writer w_;
  std::string bad_;
};

// Money to 8 places: drops summation noise.
double round8(double v) { return std::round(v * 1e8) / 1e8; }

void write_interval(SummaryWriter& sw, std::string_view key, const Interval& ci, bool present) {
  if (!present) {
    sw.w().key(key).null();
    return;
  }
  sw.w().key(key).begin_array().num(round6(ci.lo)).num(round6(ci.hi)).end_array();
}

void write_k_map(SummaryWriter& sw, std::string_view key, const std::map<int, KMean>& m, bool counts) {
  sw.w().key(key).begin_object();
  for (const auto& [k, v] : m) {  // numeric order: "2" before "10"
    if (counts)
      sw.w().field(std::to_string(k), v.groups);
    else
      sw.num(std::to_string(k), round6(v.mean));
  }
  sw.w().end_object();
}

void write_timing(SummaryWriter& sw, const Summary& s) {
  if (s.graded == 0) {
    sw.w().key("latency_s").null();
  } else {
    sw.w().key("latency_s").begin_object();
    sw.num("p50", round6(s.latency.p50))
        .num("p90", round6(s.latency.p90))
        .num("p99", round6(s.latency.p99))
        .num("max", round6(s.latency.max));
    sw.w().end_object();
  }
  if (s.graded == 0) {
    sw.w().key("wall_s").null();
  } else {
    sw.w().key("wall_s").begin_object();
    sw.num("p50", round6(s.wall.p50)).num("p90", round6(s.wall.p90)).num("max", round6(s.wall.max));
    sw.w().end_object();
  }
  sw.w().key("phases_s").begin_object();
  for (const auto& [phase, p] : s.phases) {
    sw.w().key(phase).begin_object().field("count", p.count);
    sw.num("mean", round6(p.mean)).num("p50", round6(p.p50)).num("p90", round6(p.p90));
    sw.w().end_object();
  }
  sw.w().end_object();
}

void write_errors(SummaryWriter& sw, const Summary& s) {
  sw.w().key("termination_reasons").begin_object();
  for (const auto& [reason, n] : s.termination_reasons) sw.w().field(reason, n);
  sw.w().end_object().key("infra_error_messages").begin_array();
  for (const auto& m : s.infra_error_messages)
    sw.w().begin_object().field("message", m.message).field("count", m.count).end_object();
  sw.w().end_array();
}

void write_summary(SummaryWriter& sw, const Summary& s) {
  bool any = s.graded > 0;  // with nothing graded, rates and scores are unknown, not 0
  sw.w()
      .begin_object()
      .field("trials", s.trials)
      .field("graded", s.graded)
      .field("passed", s.passed)
      .field("infra_errors", s.infra_errors);
  // Only when some line of trials.jsonl could not be counted (TrialRecord::invalid).
  if (s.invalid) {
    sw.w().field("invalid_records", s.invalid).key("invalid_record_messages").begin_array();
    for (const auto& m : s.invalid_messages)
      sw.w().begin_object().field("message", m.message).field("count", m.count).end_object();
    sw.w().end_array();
  }
  sw.num_or_null("pass_rate", round6(s.pass_rate), any);
  write_interval(sw, "pass_at_1_ci95", s.pass_at_1.ci95, any);
  write_k_map(sw, "pass_at_k", s.pass_at_k, false);
  write_k_map(sw, "pass_hat_k", s.pass_hat_k, false);
  write_k_map(sw, "pass_k_tasks", s.pass_at_k, true);
  sw.num_or_null("mean_score", round6(s.score.mean), any);
  write_interval(sw, "score_ci95", s.score.ci95, any);
  sw.w().key("tokens").begin_object().field("input", s.tokens_input).field("output", s.tokens_output).end_object();
  sw.num("cost_usd", round8(s.cost_usd));
  sw.w().field("cost_known", s.cost_unknown == 0).field("cost_unknown_trials", s.cost_unknown);
  sw.num_or_null("cost_per_pass_usd", s.passed ? round8(s.cost_usd / s.passed) : 0,
                 s.passed > 0 && s.cost_unknown == 0);
  write_timing(sw, s);
  sw.w().field("tool_calls", s.tool_calls).field("tool_errors", s.tool_errors);
  sw.num("tool_error_rate", round6(s.tool_error_rate));
  // Only when some trial recorded an egress ledger or was graded by egress rules (docs/metrics.md).
  if (s.egress_recorded || s.egress_failed)
    sw.w()
        .key("egress")
        .begin_object()
        .field("trials_with_ledger", s.egress_recorded)
        .field("tried_blocked", s.egress_tried)
        .field("failed_rules", s.egress_failed)
        .end_object();
  write_errors(sw, s);
  sw.w().end_object();
}

using Selection = std::vector<const TrialRecord*>;

// by_slice: what tasks declare (category, difficulty, each tag), then per agent. Only dimensions
// some trial has.
void write_slices(SummaryWriter& sw, const std::vector<TrialRecord>& trials) {
  std::map<std::string, std::map<std::string, std::map<std::string, Selection>>> dims;
  for (const auto& t : trials) {
    if (!t.category.empty()) dims["category"][t.category][t.agent].push_back(&t);
    if (!t.difficulty.empty()) dims["difficulty"][t.difficulty][t.agent].push_back(&t);
    for (const auto& tag : t.tags) dims["tag"][tag][t.agent].push_back(&t);
  }
  sw.w().key("by_slice").begin_object();
  for (const auto& [dim, values] : dims) {
    sw.w().key(dim).begin_object();
    for (const auto& [value, agents] : values) {
      sw.w().key(value).begin_object();
      for (const auto& [agent, sel] : agents) {
        sw.w().key(agent);
        write_summary(sw, summarize(sel));
      }
      sw.w().end_object();
    }
    sw.w().end_object();
  }
  sw.w().end_object();
}

void write_diff(SummaryWriter& sw, std::string_view key, const PairedDiff& d) {
  sw.w().key(key).begin_object();
  sw.num("a", round6(d.a)).num("b", round6(d.b)).num("diff", round6(d.diff));
  write_interval(sw, "ci95", d.ci95, true);
  sw.w().end_object();
}

void write_comparisons(SummaryWriter& sw, const std::vector<Comparison>& cs) {
  sw.w().key("comparisons").begin_array();
  for (const auto& c : cs) {
    sw.w().begin_object().field("a", c.a).field("b", c.b).field("tasks", c.tasks);
    sw.w().field("tasks_only_a", c.a_only).field("tasks_only_b", c.b_only);
    if (c.tasks > 0) {
      write_diff(sw, "pass_rate", c.pass_rate);
      write_diff(sw, "mean_score", c.score);
    } else {
      sw.w().key("pass_rate").null().key("mean_score").null();
    }
    sw.w().key("wins").begin_object().field("a", c.a_wins).field("b", c.b_wins).field("ties", c.ties).end_object();
    sw.w().field("verdict", std::string(to_string(c.verdict))).field("sentence", c.sentence).end_object();
  }
  sw.w().end_array();
}

}  // namespace

// Full-precision parsing keeps every number's digits; the writing is iterative (json::emit).
std::string indented_json(const std::string& compact) {
  json::Document d;
  // Text that does not parse is kept as it is: never a "null" file in its place.
  if (json::parse_document(d, compact, compact.size(), json::kFullPrecision)) return compact + "\n";
  return json::to_pretty_string(d) + "\n";
}

Result<std::string> aggregate_json(const std::vector<TrialRecord>& records, const AggregateOptions& options) {
  // Canaries never enter an agent's numbers, "overall" or a comparison: they have a section of their own.
  SplitTrials split = split_canaries(records);
  const std::vector<TrialRecord>& trials = split.agents;
  Selection all;
  std::map<std::string, Selection> by_agent;
  std::map<std::string, std::map<std::string, Selection>> by_task;
  for (const auto& t : trials) {
    all.push_back(&t);
    by_agent[t.agent].push_back(&t);
    by_task[t.task_id][t.agent].push_back(&t);
  }
  SummaryWriter sw;
  // First, so that nobody quotes a degraded run's numbers without seeing it is one.
  const RunValidity v = run_validity(trials, options.max_infra_rate.value_or(kDefaultMaxInfraRatePercent));
  sw.w().begin_object().field("valid", v.valid);
  if (v.valid)
    sw.w().key("invalid_reason").null();
  else
    sw.w().field("invalid_reason", v.reason);
  sw.num("max_infra_rate", v.max_infra_rate);
  sw.w().key("overall");
  write_summary(sw, summarize(all));
  sw.w().key("by_agent").begin_object();
  for (const auto& [agent, sel] : by_agent) {
    sw.w().key(agent);
    write_summary(sw, summarize(sel));
  }
  sw.w().end_object().key("by_task").begin_object();
  for (const auto& [task, agents] : by_task) {
    sw.w().key(task).begin_object();
    for (const auto& [agent, sel] : agents) {
      sw.w().key(agent);
      write_summary(sw, summarize(sel));
    }
    sw.w().end_object();
  }
  sw.w().end_object();
  write_slices(sw, trials);
  write_comparisons(sw, compare_all(trials, options.compare));
  if (!split.canaries.empty()) {
    sw.w().key("canaries");
    write_canaries_json(sw.w(), canary_report(split.canaries));
  }
  sw.w().end_object();
  // A number is either one of ours gone wrong or an absurd input; name it rather than write null.
  if (!sw.bad().empty()) return fail(Errc::kInvalid, "aggregate: \"" + sw.bad() + "\" is not a finite number");
  return indented_json(sw.w().take());
}

}  // namespace forge::results
