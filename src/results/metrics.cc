// Run metrics: the estimators, the bootstrap, and the per-set summary.
#include "results/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "results/report_svg.h"
#include "results/rng.h"

namespace forge::results {

double pass_at_k(int n, int c, int k) {
  if (k < 1 || k > n) return 0;
  if (n - c < k) return 1;  // every draw of k contains a pass
  // C(n−c,k)/C(n,k) = Π_{i=n−c+1..n} (1 − k/i): no factorials, so no overflow for any n.
  double fail_all = 1;
  for (int i = n - c + 1; i <= n; ++i) fail_all *= 1.0 - static_cast<double>(k) / i;
  return 1 - fail_all;
}

double pass_hat_k(int n, int c, int k) {
  if (k < 1 || k > n || c < k) return 0;
  // C(c,k)/C(n,k) = Π_{i=0..k−1} (c−i)/(n−i).
  double all = 1;
  for (int i = 0; i < k; ++i) all *= static_cast<double>(c - i) / (n - i);
  return all;
}

namespace {

std::map<int, KMean> mean_over_groups(std::span<const GroupCount> groups, double (*estimate)(int, int, int)) {
  int max_n = 0;
  for (const auto& g : groups) max_n = std::max(max_n, g.n);
  std::map<int, KMean> out;
  for (int k = 1; k <= max_n; ++k) {
    double sum = 0;
    int used = 0;
    for (const auto& g : groups) {
      if (g.n < k) continue;
      sum += estimate(g.n, g.c, k);
      ++used;
    }
    out[k] = KMean{sum / used, used};  // used ≥ 1: the group with max_n counts
  }
  return out;
}

double mean(const std::vector<double>& xs) {
  return xs.empty() ? 0 : std::accumulate(xs.begin(), xs.end(), 0.0) / static_cast<double>(xs.size());
}

double resampled_mean_of_means(const std::vector<const std::vector<double>*>& strata, SplitMix& rng) {
  double total = 0;
  for (const auto* s : strata) {
    double sum = 0;
    for (std::size_t i = 0; i < s->size(); ++i) sum += (*s)[rng.below(s->size())];
    total += sum / static_cast<double>(s->size());
  }
  return total / static_cast<double>(strata.size());
}

std::string cut_utf8(const std::string& s, std::size_t bytes) {
  if (s.size() <= bytes) return s;
  std::size_t end = bytes;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;  // not mid-character
  return s.substr(0, end);
}

std::map<std::string, PhaseStats> phase_stats(const std::vector<const TrialRecord*>& graded) {
  std::map<std::string, std::vector<double>> by_phase;
  for (const auto* t : graded)
    for (const auto& [phase, s] : t->phases_s) by_phase[phase].push_back(s);
  std::map<std::string, PhaseStats> out;
  for (auto& [phase, xs] : by_phase)
    out[phase] = PhaseStats{static_cast<int>(xs.size()), mean(xs), percentile(xs, 0.5), percentile(xs, 0.9)};
  return out;
}

// Graded trials of each (task, agent), the unit pass@k and the score interval are computed over.
std::map<std::pair<std::string, std::string>, std::vector<const TrialRecord*>> graded_groups(
    std::span<const TrialRecord* const> trials) {
  std::map<std::pair<std::string, std::string>, std::vector<const TrialRecord*>> out;
  for (const auto* t : trials)
    if (t->graded()) out[{t->task_id, t->agent}].push_back(t);
  return out;
}

void add_outcome_metrics(Summary& s, std::span<const TrialRecord* const> trials) {
  std::vector<GroupCount> counts;
  std::vector<std::vector<double>> scores, passes;
  for (const auto& [key, group] : graded_groups(trials)) {
    GroupCount g{static_cast<int>(group.size()), 0};
    scores.emplace_back();
    passes.emplace_back();
    for (const auto* t : group) {
      g.c += t->binary_pass ? 1 : 0;
      scores.back().push_back(t->score);
      passes.back().push_back(t->binary_pass ? 1.0 : 0.0);
    }
    counts.push_back(g);
  }
  s.pass_at_k = mean_pass_at_k(counts);
  s.pass_hat_k = mean_pass_hat_k(counts);
  s.score = stratified_mean_ci(scores);
  s.pass_at_1 = stratified_mean_ci(passes);
}

void add_spending(Summary& s, const TrialRecord& t) {
  s.tokens_input += t.tokens_input;
  s.tokens_output += t.tokens_output;
  s.cost_usd += t.cost_usd;
  s.cost_unknown += t.cost_known ? 0 : 1;
  s.tool_calls += t.tool_calls;
  s.tool_errors += t.tool_errors;
  ++s.termination_reasons[t.termination_reason.empty() ? "unknown" : t.termination_reason];
}

}  // namespace

std::map<int, KMean> mean_pass_at_k(std::span<const GroupCount> groups) { return mean_over_groups(groups, pass_at_k); }
std::map<int, KMean> mean_pass_hat_k(std::span<const GroupCount> groups) {
  return mean_over_groups(groups, pass_hat_k);
}

MeanCi stratified_mean_ci(const std::vector<std::vector<double>>& strata, int resamples, std::uint64_t seed) {
  std::vector<const std::vector<double>*> used;
  for (const auto& s : strata)
    if (!s.empty()) used.push_back(&s);
  if (used.empty()) return {};
  double point = 0;
  for (const auto* s : used) point += mean(*s);
  point /= static_cast<double>(used.size());
  SplitMix rng(seed);
  std::vector<double> means(static_cast<std::size_t>(std::max(resamples, 1)));
  for (auto& m : means) m = resampled_mean_of_means(used, rng);
  std::sort(means.begin(), means.end());
  return MeanCi{point, Interval{percentile(means, 0.025), percentile(means, 0.975)}};
}

double percentile(std::vector<double> xs, double p) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  double rank = std::clamp(p, 0.0, 1.0) * static_cast<double>(xs.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(rank));
  std::size_t hi = std::min(lo + 1, xs.size() - 1);
  return xs[lo] + (xs[hi] - xs[lo]) * (rank - static_cast<double>(lo));
}

Latency latency_of(std::vector<double> xs) {
  if (xs.empty()) return {};
  double max = *std::max_element(xs.begin(), xs.end());
  return Latency{percentile(xs, 0.5), percentile(xs, 0.9), percentile(xs, 0.99), max};
}

std::vector<MessageCount> top_messages(const std::vector<std::string>& messages, std::size_t limit, std::size_t chars) {
  std::map<std::string, int> counts;
  for (const auto& m : messages) ++counts[m.empty() ? "(no message)" : cut_utf8(m, chars)];
  std::vector<MessageCount> out;
  for (const auto& [m, n] : counts) out.push_back({m, n});
  // Stable on ties: the map gave text order, and stable_sort keeps it.
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.count > b.count; });
  if (out.size() > limit) out.resize(limit);
  return out;
}

std::optional<double> wall_seconds(const TrialRecord& t) {
  auto s = parse_iso_utc(t.started_at), e = parse_iso_utc(t.finished_at);
  if (!s || !e || *e < *s) return std::nullopt;
  return *e - *s;
}

Summary summarize(std::span<const TrialRecord* const> trials) {
  Summary s;
  std::vector<const TrialRecord*> graded;
  std::vector<std::string> infra_messages, invalid_messages;
  for (const auto* t : trials) {
    ++s.trials;
    add_spending(s, *t);
    s.egress_recorded += t->egress_recorded;
    s.egress_tried += t->egress_recorded && t->egress_blocked > 0;
    if (t->graded()) {
      auto e = t->components.find("egress");
      s.egress_failed += e != t->components.end() && e->second < 1;
      graded.push_back(t);
      s.passed += t->binary_pass ? 1 : 0;
    } else if (!t->invalid.empty()) {
      invalid_messages.push_back(t->invalid);
    } else {
      infra_messages.push_back(t->error);
    }
  }
  s.graded = static_cast<int>(graded.size());
  s.invalid = static_cast<int>(invalid_messages.size());
  s.infra_errors = s.trials - s.graded - s.invalid;
  s.pass_rate = s.graded ? static_cast<double>(s.passed) / s.graded : 0;
  s.tool_error_rate = s.tool_calls ? static_cast<double>(s.tool_errors) / static_cast<double>(s.tool_calls) : 0;
  add_outcome_metrics(s, trials);
  std::vector<double> durations;
  for (const auto* t : graded) durations.push_back(t->duration_s);
  s.latency = latency_of(std::move(durations));
  std::vector<double> walls;
  for (const auto* t : graded)
    if (auto w = wall_seconds(*t)) walls.push_back(*w);
  s.wall = latency_of(std::move(walls));
  s.phases = phase_stats(graded);
  s.infra_error_messages = top_messages(infra_messages);
  s.invalid_messages = top_messages(invalid_messages);
  return s;
}

}  // namespace forge::results
