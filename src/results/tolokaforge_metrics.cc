// Tolokaforge's per-task rows, flat aggregate and metadata slices, from trial records.
#include "results/tolokaforge_metrics.h"

#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "core/json.h"
#include "results/aggregate.h"
#include "results/metrics.h"

namespace forge::results::tolokaforge {

namespace {

using Opt = std::optional<double>;

Opt mean_of(const std::vector<double>& xs) {
  if (xs.empty()) return std::nullopt;
  return std::accumulate(xs.begin(), xs.end(), 0.0) / static_cast<double>(xs.size());
}

// The mean of the tasks' values that exist: a task that graded nothing has no rate to average,
// where Tolokaforge averages in a 0.
Opt macro(const std::vector<TaskMetrics>& tasks, Opt TaskMetrics::*field) {
  std::vector<double> xs;
  for (const auto& t : tasks)
    if (t.*field) xs.push_back(*(t.*field));
  return mean_of(xs);
}

Opt macro_k(const std::vector<TaskMetrics>& tasks, std::array<Opt, kPassK.size()> TaskMetrics::*field, std::size_t i) {
  std::vector<double> xs;
  for (const auto& t : tasks)
    if ((t.*field)[i]) xs.push_back(*(t.*field)[i]);
  return mean_of(xs);
}

std::string k_key(const char* name, int k, const char* suffix = "") {
  return std::string(name) + "@" + std::to_string(k) + suffix;
}

// json::Writer plus null for an absent number and a check that every number is finite.
class NumWriter {
 public:
  json::Writer& w() { return w_; }
  NumWriter& num(std::string_view key, Opt v) {
    w_.key(key);
    if (!v) {
      w_.null();
    } else {
      if (!std::isfinite(*v) && bad_.empty()) bad_ = std::string(key);
      w_.num(std::isfinite(*v) ? *v : 0);
    }
    return *this;
  }
  NumWriter& str_or_null(std::string_view key, const std::string& v) {
    if (v.empty())
      w_.key(key).null();
    else
      w_.field(key, v);
    return *this;
  }
  Result<std::string> finish() {
    if (!bad_.empty()) return fail(Errc::kInvalid, "tolokaforge metrics: \"" + bad_ + "\" is not a finite number");
    return indented_json(w_.take());
  }

 private:
  json::Writer w_;
  std::string bad_;
};

TaskMetrics row_of(const std::string& task_id, const std::vector<const TrialRecord*>& trials) {
  TaskMetrics m;
  m.task_id = task_id;
  const TrialRecord& first = *trials.front();
  m.category = first.category;
  m.complexity = first.difficulty;
  m.tags = first.tags;
  m.expected_failure_modes = first.expected_failure_modes;
  std::vector<double> scores, turns, calls, tok_in, tok_out, costs;
  int stuck = 0;
  for (const auto* t : trials) {
    if (!t->graded()) {
      ++m.infra_errors;
      continue;
    }
    ++m.total_trials;
    m.successful_trials += t->binary_pass;
    scores.push_back(t->score);
    m.latencies.push_back(t->duration_s);
    turns.push_back(static_cast<double>(t->turns));
    calls.push_back(static_cast<double>(t->tool_calls));
    tok_in.push_back(static_cast<double>(t->tokens_input));
    tok_out.push_back(static_cast<double>(t->tokens_output));
    if (t->cost_known) costs.push_back(t->cost_usd);
    stuck += t->termination_reason == "stuck_detected";
  }
  const int n = m.total_trials;
  if (n > 0) m.success_rate = static_cast<double>(m.successful_trials) / n;
  for (std::size_t i = 0; i < kPassK.size(); ++i) {
    if (kPassK[i] > n) continue;  // k trials cannot be drawn from fewer
    m.pass_at[i] = pass_at_k(n, m.successful_trials, kPassK[i]);
    m.tau_pass_hat[i] = pass_hat_k(n, m.successful_trials, kPassK[i]);
  }
  m.avg_score = mean_of(scores);
  m.avg_latency_s = mean_of(m.latencies);
  m.avg_turns = mean_of(turns);
  m.avg_tool_calls = mean_of(calls);
  m.avg_tokens_input = mean_of(tok_in);
  m.avg_tokens_output = mean_of(tok_out);
  m.tokens_input = std::accumulate(tok_in.begin(), tok_in.end(), 0.0);
  m.tokens_output = std::accumulate(tok_out.begin(), tok_out.end(), 0.0);
  if (!costs.empty()) m.total_cost_usd = std::accumulate(costs.begin(), costs.end(), 0.0);
  m.avg_cost_usd = mean_of(costs);
  if (n > 0) {
    m.latency_p50_s = percentile(m.latencies, 0.5);
    m.latency_p90_s = percentile(m.latencies, 0.9);
    m.latency_p99_s = percentile(m.latencies, 0.99);
    m.stuck_rate = static_cast<double>(stuck) / n;
  }
  return m;
}

void write_row(NumWriter& nw, const TaskMetrics& m) {
  auto& w = nw.w();
  w.begin_object().field("total_trials", m.total_trials).field("successful_trials", m.successful_trials);
  nw.num("success_rate", m.success_rate);
  for (std::size_t i = 0; i < kPassK.size(); ++i) {
    nw.num(k_key("pass", kPassK[i]), m.pass_at[i]);
    nw.num(k_key("pass_hat", kPassK[i]), m.pass_at[i]);  // Tolokaforge's pass_hat is pass@k
  }
  nw.num("avg_score", m.avg_score)
      .num("avg_latency_s", m.avg_latency_s)
      .num("avg_turns", m.avg_turns)
      .num("avg_tool_calls", m.avg_tool_calls)
      .num("avg_tokens_input", m.avg_tokens_input)
      .num("avg_tokens_output", m.avg_tokens_output)
      .num("total_cost_usd", m.total_cost_usd)
      .num("avg_cost_usd", m.avg_cost_usd)
      .num("latency_p50_s", m.latency_p50_s)
      .num("latency_p90_s", m.latency_p90_s)
      .num("latency_p99_s", m.latency_p99_s)
      .num("stuck_rate", m.stuck_rate);
  w.field("task_id", m.task_id);
  nw.str_or_null("benchmark_type", m.category).str_or_null("complexity", m.complexity);
  w.field("expected_failure_modes", m.expected_failure_modes).field("tags", m.tags);
  // forgectl's own: what Tolokaforge lacks, after its keys.
  w.field("infra_errors", m.infra_errors);
  for (std::size_t i = 0; i < kPassK.size(); ++i) nw.num(k_key("tau_pass_hat", kPassK[i]), m.tau_pass_hat[i]);
  w.end_object();
}

// The aggregate of `tasks`; `global_latency` adds the percentiles over all their trials (the
// run's aggregate.json has them, a slice does not, as in Tolokaforge).
void write_aggregate(NumWriter& nw, const std::vector<TaskMetrics>& tasks, bool global_latency) {
  auto& w = nw.w();
  int trials = 0, passed = 0, infra = 0;
  double score_sum = 0, tok_in = 0, tok_out = 0;
  std::vector<double> latencies, costs;
  for (const auto& t : tasks) {
    trials += t.total_trials;
    passed += t.successful_trials;
    infra += t.infra_errors;
    if (t.avg_score) score_sum += *t.avg_score * t.total_trials;
    tok_in += t.tokens_input;
    tok_out += t.tokens_output;
    latencies.insert(latencies.end(), t.latencies.begin(), t.latencies.end());
    if (t.total_cost_usd) costs.push_back(*t.total_cost_usd);
  }
  w.begin_object().field("total_tasks", static_cast<int>(tasks.size())).field("total_trials", trials);
  nw.num("success_rate_micro", trials ? Opt(static_cast<double>(passed) / trials) : std::nullopt);
  nw.num("avg_score_micro", trials ? Opt(score_sum / trials) : std::nullopt);
  for (std::size_t i = 0; i < kPassK.size(); ++i) {
    nw.num(k_key("pass", kPassK[i], "_macro"), macro_k(tasks, &TaskMetrics::pass_at, i));
    nw.num(k_key("pass_hat", kPassK[i], "_macro"), macro_k(tasks, &TaskMetrics::pass_at, i));
  }
  nw.num("avg_latency_s", macro(tasks, &TaskMetrics::avg_latency_s))
      .num("avg_turns", macro(tasks, &TaskMetrics::avg_turns))
      .num("avg_tool_calls", macro(tasks, &TaskMetrics::avg_tool_calls))
      .num("stuck_rate", macro(tasks, &TaskMetrics::stuck_rate))
      .num("total_tokens_input", tok_in)
      .num("total_tokens_output", tok_out)
      .num("avg_tokens_input", macro(tasks, &TaskMetrics::avg_tokens_input))
      .num("avg_tokens_output", macro(tasks, &TaskMetrics::avg_tokens_output))
      .num("total_cost_usd", costs.empty() ? std::nullopt : Opt(std::accumulate(costs.begin(), costs.end(), 0.0)))
      .num("avg_cost_usd", macro(tasks, &TaskMetrics::avg_cost_usd))
      .num("latency_p50_s_macro", macro(tasks, &TaskMetrics::latency_p50_s))
      .num("latency_p90_s_macro", macro(tasks, &TaskMetrics::latency_p90_s))
      .num("latency_p99_s_macro", macro(tasks, &TaskMetrics::latency_p99_s));
  if (global_latency) {
    bool any = !latencies.empty();
    nw.num("latency_p50_s", any ? Opt(percentile(latencies, 0.5)) : std::nullopt)
        .num("latency_p90_s", any ? Opt(percentile(latencies, 0.9)) : std::nullopt)
        .num("latency_p99_s", any ? Opt(percentile(latencies, 0.99)) : std::nullopt);
  }
  w.field("infra_errors", infra);
  for (std::size_t i = 0; i < kPassK.size(); ++i)
    nw.num(k_key("tau_pass_hat", kPassK[i], "_macro"), macro_k(tasks, &TaskMetrics::tau_pass_hat, i));
  w.end_object();
}

}  // namespace

std::vector<TaskMetrics> task_metrics(std::span<const TrialRecord* const> trials) {
  std::map<std::string, std::vector<const TrialRecord*>> by_task;  // sorted: the same bytes every time
  for (const auto* t : trials) by_task[t->task_id].push_back(t);
  std::vector<TaskMetrics> out;
  for (const auto& [task, group] : by_task) out.push_back(row_of(task, group));
  return out;
}

Result<std::string> per_task_metrics_json(const std::vector<TaskMetrics>& tasks) {
  NumWriter nw;
  nw.w().begin_array();
  for (const auto& t : tasks) write_row(nw, t);
  nw.w().end_array();
  return nw.finish();
}

Result<std::string> aggregate_json(const std::vector<TaskMetrics>& tasks) {
  NumWriter nw;
  write_aggregate(nw, tasks, true);
  return nw.finish();
}

Result<std::string> metadata_slices_json(const std::vector<TaskMetrics>& tasks) {
  // Tolokaforge's names for a task without the label: "unknown" type, "unspecified" complexity.
  std::map<std::string, std::map<std::string, std::vector<TaskMetrics>>> dims = {
      {"by_benchmark_type", {}}, {"by_complexity", {}}, {"by_tag", {}}, {"by_expected_failure_mode", {}}};
  for (const auto& t : tasks) {
    dims["by_benchmark_type"][t.category.empty() ? "unknown" : t.category].push_back(t);
    dims["by_complexity"][t.complexity.empty() ? "unspecified" : t.complexity].push_back(t);
    // A label listed twice still puts the task in its slice once.
    for (const auto& tag : std::set<std::string>(t.tags.begin(), t.tags.end())) dims["by_tag"][tag].push_back(t);
    for (const auto& mode : std::set<std::string>(t.expected_failure_modes.begin(), t.expected_failure_modes.end()))
      dims["by_expected_failure_mode"][mode].push_back(t);
  }
  NumWriter nw;
  nw.w().begin_object();
  for (const char* dim : {"by_benchmark_type", "by_complexity", "by_tag", "by_expected_failure_mode"}) {
    nw.w().key(dim).begin_object();
    for (const auto& [value, group] : dims[dim]) {
      nw.w().key(value);
      write_aggregate(nw, group, false);
    }
    nw.w().end_object();
  }
  nw.w().end_object();
  return nw.finish();
}

}  // namespace forge::results::tolokaforge
