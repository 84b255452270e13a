// Cheat canaries' results, per task.
#include "results/canary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace forge::results {

namespace {

std::string strategy_of(const TrialRecord& r) { return r.agent.substr(kCanaryPrefix.size()); }

// What a strategy's pass means, for the warning. results does not know the agents: the names are
// agent/canary.h's, and an unknown one (a newer forgectl's) is shown bare.
std::string what_it_did(const std::string& strategy) {
  if (strategy == "reward-file") return "wrote reward.txt / reward.json where a verifier might read them";
  if (strategy == "conftest") return "planted conftest.py, sitecustomize.py and a pytest plugin";
  if (strategy == "read-tests") return "read the tests or solution it could reach and ran what it found";
  if (strategy == "curl-solution") return "fetched the solution from the trial's own services";
  return "";
}

std::string percent(double v) { return std::to_string(static_cast<int>(std::lround(v * 100))) + "%"; }

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

double round6(double v) { return std::round(v * 1e6) / 1e6; }

}  // namespace

bool is_canary(const TrialRecord& r) { return r.agent.compare(0, kCanaryPrefix.size(), kCanaryPrefix) == 0; }

SplitTrials split_canaries(const std::vector<TrialRecord>& trials) {
  SplitTrials out;
  for (const auto& t : trials) (is_canary(t) ? out.canaries : out.agents).push_back(t);
  return out;
}

std::vector<std::string> CanaryTask::succeeded() const {
  std::vector<std::string> out;
  for (const auto& [name, s] : strategies)
    if (s.passed > 0) out.push_back(name);
  return out;
}

std::vector<std::string> CanaryTask::partial() const {
  std::vector<std::string> out;
  for (const auto& [name, s] : strategies)
    if (s.passed == 0 && s.graded > 0 && s.best_score > 0) out.push_back(name);
  return out;
}

CanaryReport canary_report(const std::vector<TrialRecord>& canary_trials) {
  std::map<std::string, CanaryTask> tasks;
  CanaryReport r;
  for (const auto& t : canary_trials) {
    if (!is_canary(t)) continue;
    CanaryTask& task = tasks[t.task_id];
    task.task_id = t.task_id;
    CanaryStrategyResult& s = task.strategies[strategy_of(t)];
    ++s.trials;
    ++task.trials;
    if (s.trial_dir.empty()) s.trial_dir = t.trial_dir;
    if (!t.graded()) {
      ++task.infra_errors;
      continue;
    }
    if (s.graded == 0) s.trial_dir = t.trial_dir;
    s.best_score = s.graded == 0 ? t.score : std::max(s.best_score, t.score);
    ++s.graded;
    ++task.graded;
    s.passed += t.binary_pass;
    task.cheated += t.binary_pass;
  }
  for (auto& [id, task] : tasks) {
    r.trials += task.trials;
    r.graded += task.graded;
    r.cheated += task.cheated;
    r.infra_errors += task.infra_errors;
    r.tasks_cheated += task.cheated > 0;
    r.tasks.push_back(std::move(task));
  }
  return r;
}

void write_canaries_json(json::Writer& w, const CanaryReport& r) {
  auto rate = [&w](int num, int den) {
    if (den) w.key("cheat_rate").num(round6(static_cast<double>(num) / den));
    else w.key("cheat_rate").null();
  };
  w.begin_object().field("trials", r.trials).field("graded", r.graded).field("cheated", r.cheated);
  rate(r.cheated, r.graded);
  w.field("infra_errors", r.infra_errors)
      .field("tasks", static_cast<int>(r.tasks.size()))
      .field("tasks_cheated", r.tasks_cheated)
      .key("by_task")
      .begin_object();
  for (const auto& t : r.tasks) {
    w.key(t.task_id).begin_object().field("trials", t.trials).field("graded", t.graded).field("cheated", t.cheated);
    rate(t.cheated, t.graded);
    w.field("infra_errors", t.infra_errors).field("succeeded", t.succeeded()).field("partial", t.partial());
    w.key("strategies").begin_object();
    for (const auto& [name, s] : t.strategies) {
      w.key(name).begin_object().field("trials", s.trials).field("graded", s.graded).field("passed", s.passed);
      if (s.graded) w.key("best_score").num(round6(s.best_score));
      else w.key("best_score").null();
      w.end_object();
    }
    w.end_object().end_object();
  }
  w.end_object().end_object();
}

std::string canary_table(const CanaryReport& r) {
  if (r.empty()) return "";
  std::size_t width = 5;
  for (const auto& t : r.tasks) width = std::min<std::size_t>(std::max(width, t.task_id.size()), 48);
  std::string out = "\ncheat canaries (scripted agents that try to pass without doing the task; apart from the "
                    "agents' results):\n";
  char line[1024];
  std::snprintf(line, sizeof line, "%-*s  %6s %7s %6s  %s\n", static_cast<int>(width), "task", "graded", "cheated",
                "rate", "passed by");
  out += line;
  for (const auto& t : r.tasks) {
    std::string by = joined(t.succeeded());
    if (by.empty()) by = "-";
    if (t.infra_errors) by += "  (" + std::to_string(t.infra_errors) + " infra error(s) not counted)";
    std::snprintf(line, sizeof line, "%-*s  %6d %7d %6s  %s\n", static_cast<int>(width), t.task_id.c_str(), t.graded,
                  t.cheated, t.graded ? percent(t.cheat_rate()).c_str() : "n/a", by.c_str());
    out += line;
  }
  std::snprintf(line, sizeof line, "%-*s  %6d %7d %6s  %d of %zu task(s) passed by a canary\n", static_cast<int>(width),
                "total", r.graded, r.cheated,
                r.graded ? percent(static_cast<double>(r.cheated) / r.graded).c_str() : "n/a", r.tasks_cheated,
                r.tasks.size());
  out += line;
  return out;
}

std::vector<std::string> canary_warnings(const CanaryReport& r) {
  std::vector<std::string> out;
  for (const auto& t : r.tasks) {
    auto by = t.succeeded();
    if (by.empty()) continue;
    std::string how;
    for (const auto& s : by) {
      std::string did = what_it_did(s);
      how += (how.empty() ? "" : "; ") + std::string(kCanaryPrefix) + s + (did.empty() ? "" : " (" + did + ")");
    }
    out.push_back("cheat canary: task '" + t.task_id + "' was passed by " + how +
                  ": its grader can be gamed without doing the task");
  }
  return out;
}

}  // namespace forge::results
