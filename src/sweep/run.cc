// `forgectl run`.
#include "sweep/run.h"

#include <fnmatch.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iomanip>
#include <map>
#include <mutex>
#include <ostream>

#include "core/parallel.h"
#include "core/strings.h"
#include "manifest/task_parse.h"

namespace forge::sweep {

namespace fs = std::filesystem;

Result<std::vector<std::string>> discover_tasks(const std::vector<std::string>& paths, const std::string& glob) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      out.push_back(fs::absolute(p).lexically_normal().string());
    } else if (fs::is_directory(p, ec) && fs::exists(fs::path(p) / "task.yaml")) {
      out.push_back(fs::absolute(fs::path(p) / "task.yaml").lexically_normal().string());
    } else if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_regular_file() || it->path().filename() != "task.yaml") continue;
        std::string rel = fs::relative(it->path(), p).generic_string();
        // "**/task.yaml" also matches a task.yaml at the top, as a shell's globstar does.
        if (::fnmatch(glob.c_str(), rel.c_str(), FNM_PATHNAME) == 0 || glob == "**/task.yaml")
          found.push_back(fs::absolute(it->path()).lexically_normal().string());
      }
      if (found.empty()) return fail(Errc::kInvalid, "no task.yaml under '" + p + "' (tasks_glob " + glob + ")");
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else {
      return fail(Errc::kInvalid, "'" + p + "' is not a task directory, a task.yaml, or a directory of tasks");
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

static std::string task_summary_yaml(const manifest::TaskConfig& t, int idx) {
  return "task_id: " + t.task_id + "\ntrial_index: " + std::to_string(idx) + "\ncategory: " + t.category +
         "\nname: " + t.name + "\ngrading: " + t.grading.path + "\n";
}

Result<RunSummary> run_sweep(const RunOptions& o, TrialEnv& env, RunWriter& writer, std::ostream& progress) {
  auto start = Clock::now();
  auto paths = discover_tasks(o.task_paths, env.run->tasks_glob);
  if (!paths) return paths.fail();
  // Every task is loaded (and so validated) before any trial starts: a typo in task 50 must not
  // surface after 49 tasks' worth of spending.
  std::vector<manifest::TaskConfig> tasks;
  std::vector<std::string> problems;
  for (const auto& p : *paths) {
    auto t = manifest::load_task(p);
    if (!t) problems.push_back(t.error().what());
    else tasks.push_back(std::move(*t));
  }
  if (!problems.empty()) return fail(Errc::kInvalid, join(problems, "\n"));
  std::map<std::string, int> seen;
  for (const auto& t : tasks)
    if (++seen[t.task_id] > 1) return fail(Errc::kInvalid, "task_id '" + t.task_id + "' appears twice in this run");

  struct Job {
    const manifest::TaskConfig* task;
    int index;
  };
  std::vector<Job> jobs;
  for (const auto& t : tasks)
    for (int i = 0; i < o.trials; ++i) jobs.push_back({&t, i});

  RunSummary sum;
  sum.run_id = env.run_id;
  std::map<std::string, TaskSummary> per_task;
  for (const auto& t : tasks) per_task[t.task_id].task_id = t.task_id;
  std::mutex mu;
  std::atomic<bool> stop_run{false};
  std::size_t done = 0;
  std::vector<Error> write_errors;
  progress << "forgectl run " << env.run_id << ": " << tasks.size() << " task(s) × " << o.trials << " trial(s), agent "
           << o.agent.label() << " → " << writer.dir() << '\n';

  parallel_for(jobs.size(), [&](std::size_t j) {
    const auto& job = jobs[j];
    if (env.interrupted && env.interrupted->load() > 0) return;
    if (stop_run.load()) return;
    TrialResult r;
    for (int attempt = 1;; ++attempt) {
      r = run_trial(*job.task, job.index, attempt, o.agent, env);
      bool retry = r.outcome == Outcome::kInfraError && !r.stops_run && attempt <= env.run->max_attempt_retries &&
                   !(env.interrupted && env.interrupted->load() > 0);
      if (!retry) break;
      std::lock_guard lock(mu);
      progress << "  retry " << r.task_id << "#" << r.trial_index << " (attempt " << attempt + 1 << "): " << r.error << '\n';
    }
    auto st = writer.write_trial(r, task_summary_yaml(*job.task, job.index));
    std::lock_guard lock(mu);
    if (r.stops_run && !stop_run.exchange(true)) sum.stopped = r.error;
    if (!st) write_errors.push_back(st.error());
    auto& ts = per_task[r.task_id];
    ++ts.trials;
    ++sum.trials;
    if (r.outcome == Outcome::kInfraError) {
      ++ts.infra_errors;
      ++sum.infra_errors;
    } else {
      ts.score_sum += r.grade.score;
      if (r.grade.binary_pass) {
        ++ts.passed;
        ++sum.passed;
      }
    }
    sum.cost_usd += r.episode.agent_cost_usd + r.episode.user_cost_usd + r.judge_cost_usd;
    ++done;
    progress << "  [" << done << "/" << jobs.size() << "] " << r.task_id << "#" << r.trial_index << " "
             << (r.outcome == Outcome::kInfraError ? "INFRA-ERROR" : r.grade.binary_pass ? "pass" : "fail") << " score "
             << std::fixed << std::setprecision(3) << (r.outcome == Outcome::kGraded ? r.grade.score : 0.0) << " ("
             << agent::termination_name(r.episode.termination) << ", " << r.episode.turns << " turns, "
             << std::setprecision(1) << static_cast<double>(elapsed_since(start).count()) / 1000.0 << " s)"
             << (r.error.empty() ? "" : " — " + r.error.substr(0, 200)) << '\n';
  }, static_cast<std::size_t>(std::max(1, o.concurrency)));

  if (!write_errors.empty()) return fail(write_errors.front().with_context("writing trial results"));
  for (auto& [id, ts] : per_task) sum.tasks.push_back(ts);
  sum.elapsed = elapsed_since(start);
  return sum;
}

void print_summary(std::ostream& out, const RunSummary& s) {
  out << "\nTASK                                     TRIALS  PASS  MEAN SCORE  INFRA\n";
  for (const auto& t : s.tasks) {
    int graded = t.trials - t.infra_errors;
    out << std::left << std::setw(40) << t.task_id.substr(0, 40) << ' ' << std::right << std::setw(6) << t.trials << "  "
        << std::setw(4) << t.passed << "  " << std::setw(10) << std::fixed << std::setprecision(3)
        << (graded ? t.score_sum / graded : 0.0) << "  " << std::setw(5) << t.infra_errors << '\n';
  }
  int graded = s.trials - s.infra_errors;
  out << "\n" << s.passed << "/" << graded << " graded trials passed";
  if (s.infra_errors) out << ", " << s.infra_errors << " infra error(s) (not counted)";
  out << "; cost $" << std::setprecision(4) << s.cost_usd << "; " << std::setprecision(1)
      << static_cast<double>(s.elapsed.count()) / 1000.0 << " s\n";
  if (!s.stopped.empty()) out << "run stopped early: " << s.stopped << "\n";
}

}  // namespace forge::sweep
