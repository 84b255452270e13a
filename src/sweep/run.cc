// `forgectl run`: scheduling the plan's trials through a TrialRunner.
#include "sweep/run.h"

#include <algorithm>
#include <iomanip>
#include <mutex>
#include <ostream>
#include <set>
#include <sstream>

#include "core/crash_note.h"
#include "core/parallel.h"
#include "core/process_identity.h"
#include "core/scope_guard.h"
#include "results/canary.h"
#include "results/report_files.h"
#include "results/validity.h"
#include "sweep/progress.h"
#include "sweep/run_resume.h"
#include "sweep/run_state.h"
#include "sweep/warm_pool.h"

namespace forge::sweep {

namespace {

using results::Outcome;

std::string trial_line_text(const results::TrialRecord& r, std::size_t done, std::size_t total) {
  std::ostringstream s;
  s << "  [" << done << "/" << total << "] " << r.task_id << "#" << r.trial_index << " " << r.agent << " ";
  if (r.outcome == Outcome::kInfraError) s << "INFRA-ERROR(" << results::to_string(r.infra_kind) << ")";
  else if (r.outcome == Outcome::kSetupError) s << "SETUP-ERROR";
  else s << (r.binary_pass ? "pass" : "fail") << " score " << std::fixed << std::setprecision(3) << r.score;
  s << " (" << r.termination_reason << ", " << r.turns << " turns";
  if (!r.docker_host.empty()) s << ", " << r.docker_host;
  s << ")";
  if (!r.error.empty()) s << " — " << r.error.substr(0, 200);
  return s.str();
}

// The scheduling of one invocation: each job's attempts, its record, and the run's stop.
class Scheduler {
 public:
  Scheduler(const RunOptions& o, TrialRunner& runner, RunState& state, results::RunDir& dir, Progress& progress,
            std::size_t done_before, std::size_t total)
      : o_(o), runner_(runner), state_(state), dir_(dir), progress_(progress), done_(done_before), total_(total) {}

  void run(const std::vector<const Job*>& todo, int concurrency) {
    // The warm pool prepares the sandboxes of the jobs in line, the first wave's too (each trial
    // is then claimed in a ready sandbox; the wave's wait is the pool's, not its trials'), and
    // the next ones while the first run.
    int capacity = std::min(runner_.pool_capacity(), static_cast<int>(todo.size()));
    int threads = std::min(capacity, std::max(kPoolThreads, concurrency / 2));
    if (capacity > 0)
      pool_ = std::make_unique<WarmPool>(runner_, todo, capacity, threads, [this] { return stopping(); });
    parallel_for(todo.size(), [&](std::size_t n) { run_job(*todo[n], n); }, static_cast<std::size_t>(concurrency));
    if (pool_) {
      pool_->shutdown();
      pool_stats_ = pool_->stats();
      pool_.reset();
    }
  }
  std::optional<PoolStats> pool_stats() const { return pool_stats_; }

  int ran() const { return ran_; }
  int interrupted() const { return interrupted_; }
  const std::string& stopped() const { return stopped_; }
  bool setup_error() const { return setup_error_; }
  // The first error writing results or state: the run must not pretend it recorded them.
  std::optional<Error> write_error() const { return errors_.empty() ? std::nullopt : std::optional(errors_.front()); }

 private:
  bool stopping() const { return stop_.load() || (o_.interrupted && o_.interrupted->load() > 0); }

  void record_error(Status st) {
    if (st) return;
    std::lock_guard lock(mu_);
    errors_.push_back(st.error());
  }

  void stop_run(const std::string& why, bool setup) {
    std::lock_guard lock(mu_);
    if (stop_.exchange(true)) return;
    stopped_ = why;
    setup_error_ = setup;
  }

  // Attempts of one job until one counts: a graded trial, an infra error out of retries, a setup
  // error (stops the run) or an interruption (left for --resume).
  void run_job(const Job& job, std::size_t n) {
    // A job that ends before its first attempt took its sandbox gives the place back.
    bool took = false;
    ScopeGuard give_back([&] {
      if (!took && pool_) pool_->forgo(n);
    });
    if (stopping()) return;
    const std::string owner = ProcessIdentity::current().str();
    for (int tries = 1;; ++tries) {
      auto attempt = state_.begin_attempt(job.key, owner, std::time(nullptr) + o_.lease_s);
      if (!attempt) return record_error(attempt.fail());
      // The live view follows the attempt; the copy carries its callback.
      std::string id = job.key + "/" + std::to_string(*attempt);
      progress_.started(id, job.task->task_id, job.agent.label(), job.index);
      Job watched = job;
      watched.on_progress = [this, id](const trial::TrialProgress& p) { progress_.update(id, p); };
      // The first wave waits here for sandboxes still in preparation: the model's first turn
      // need not (docs/sweeps.md "The first wave"). A retry asks its own, in its own trial.
      if (tries == 1 && pool_) watched.first_turn = runner_.start_first_turn(watched);
      // The first attempt takes its prepared sandbox, if any; a retry is always a fresh one.
      std::unique_ptr<Prepared> prepared = tries == 1 && pool_ ? pool_->take(n) : nullptr;
      took = true;
      Attempt a = prepared ? runner_.run_prepared(watched, *attempt, std::move(prepared)) : runner_.run(watched, *attempt);
      progress_.landed(id);
      if (a.interrupted || (stopping() && a.record.outcome == Outcome::kInfraError)) return abandon(job, *attempt, a);
      if (a.record.outcome == Outcome::kSetupError) return setup_failed(job, *attempt, a);
      bool retry = a.record.outcome == Outcome::kInfraError && !a.stops_run && tries <= o_.retries && !stopping();
      if (!retry) return finished(job, a);
      record_error(state_.end_attempt(job.key, *attempt, "infra_error", a.record.error, false));
      progress_.event("  retry " + job.task->task_id + "#" + std::to_string(job.index) + " " + job.agent.label() +
                      " (attempt " + std::to_string(*attempt + 1) + ", fresh sandbox): " +
                      std::string(results::to_string(a.record.infra_kind)) + ": " + a.record.error.substr(0, 200));
    }
  }

  void abandon(const Job& job, int attempt, const Attempt&) {
    record_error(state_.abandon(job.key, attempt, "interrupted"));
    std::lock_guard lock(mu_);
    ++interrupted_;
  }

  // Not a result: nothing in trials.jsonl; the trial stays pending for a run after the fix.
  void setup_failed(const Job& job, int attempt, const Attempt& a) {
    record_error(state_.end_attempt(job.key, attempt, "setup_error", a.record.error, false));
    progress_.event("  SETUP-ERROR " + job.task->task_id + "#" + std::to_string(job.index) + " " + job.agent.label() +
                    ": " + a.record.error);
    stop_run("setup error in task " + job.task->task_id + ": " + a.record.error, true);
  }

  void finished(const Job& job, const Attempt& a) {
    Status st = dir_.append_trial(a.record);
    if (st) st = state_.end_attempt(job.key, a.record.attempt, std::string(results::to_string(a.record.outcome)),
                                    a.record.error, true);
    record_error(st);
    {
      std::lock_guard lock(mu_);
      ++ran_;
    }
    if (a.stops_run) stop_run(a.record.error, false);
    std::size_t done = ++done_;
    progress_.event(trial_line_text(a.record, done, total_));
    progress_.finished(a.record.outcome == Outcome::kInfraError, a.record.binary_pass, a.record.cost_usd,
                       a.record.cost_known);
  }

  // Preparations at once are the up admission's to limit (its adaptive bound: concurrency / 2).
  static constexpr int kPoolThreads = 16;

  const RunOptions& o_;
  TrialRunner& runner_;
  std::unique_ptr<WarmPool> pool_;
  std::optional<PoolStats> pool_stats_;
  RunState& state_;
  results::RunDir& dir_;
  Progress& progress_;
  std::atomic<std::size_t> done_;
  std::size_t total_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  int ran_ = 0, interrupted_ = 0;
  std::string stopped_;
  bool setup_error_ = false;
  std::vector<Error> errors_;
};

void print_header(std::ostream& out, const RunOptions& o, const Plan& plan, const std::string& dir,
                  const ResumePoint& rp, std::size_t todo) {
  out << "forgectl run " << o.run_id << ": " << plan.tasks.size() << " task(s) × " << plan.agent_count << " agent(s) × "
      << plan.trials << " trial(s)";
  if (plan.canary_trials) out << " + " << plan.canary_trials << " cheat canary trial(s)";
  if (plan.shard.count > 1) out << ", shard " << to_string(plan.shard) << " (" << plan.jobs.size() << " trials)";
  out << " → " << dir << '\n';
  if (o.resume)
    out << "resume: " << rp.done.size() << " finished, " << todo << " to run (" << rp.recovered
        << " interrupted attempt(s) recovered, " << rp.infra_retried << " infra error(s) to retry, " << rp.superseded
        << " result(s) of changed tasks set aside" << (rp.torn ? ", a torn last line dropped" : "") << ")\n";
}

// Every finished trial of the plan, this invocation's and earlier ones', into the summary.
std::vector<results::TrialRecord> tally(const std::string& dir, const std::set<std::string>& keys,
                                        double max_infra_rate, RunSummary& sum) {
  std::vector<results::TrialRecord> records;
  if (auto log = results::read_trials_jsonl(dir + "/trials.jsonl"))
    for (auto& r : log->trials)
      if (keys.count(r.trial_key)) records.push_back(std::move(r));
  for (const auto& r : records) {
    ++sum.trials;
    sum.cost_usd += r.cost_usd;
    if (!r.graded()) {
      ++sum.infra_errors;
      continue;
    }
    if (results::is_canary(r)) continue;
    ++sum.graded;
    sum.passed += r.binary_pass;
  }
  auto canaries = results::canary_report(results::split_canaries(records).canaries);
  sum.canary_graded = canaries.graded;
  sum.canary_cheated = canaries.cheated;
  sum.canary_warnings = results::canary_warnings(canaries);
  results::AggregateOptions options;
  options.max_infra_rate = max_infra_rate;
  if (auto t = results::summary_table(records, options)) sum.table = *t;
  auto v = results::run_validity(records, max_infra_rate);
  sum.valid = v.valid;
  sum.invalid_reason = v.reason;
  return records;
}

}  // namespace

Result<RunSummary> run_sweep(const RunOptions& o, const Plan& plan, TrialRunner& runner, results::RunDir& dir,
                             const DescribeRun& describe, std::ostream& out) {
  auto start = Clock::now();
  auto lock = acquire_run_lock(dir.dir());
  if (!lock) return lock.fail();
  auto state = RunState::open(dir.dir());
  if (!state) return state.fail();
  std::vector<PlannedTrial> planned;
  std::set<std::string> keys;
  for (const auto& j : plan.jobs) {
    planned.push_back({j.key, j.task->task_id, j.agent.label(), j.index});
    keys.insert(j.key);
  }
  auto rp = reconcile_run_dir(**state, dir.dir(), keys, o.resume);
  if (!rp) return rp.fail();
  if (auto st = (*state)->plan(planned); !st) return st.fail();
  if (auto st = (*state)->set_meta("config_hash", plan.facts.config_hash); !st) return st.fail();
  if (auto st = (*state)->set_meta("run_id", o.run_id); !st) return st.fail();
  if (rp->spent_usd > 0 && o.budget) o.budget->settle("resumed", 0.0, rp->spent_usd);

  RunSummary sum;
  sum.run_id = o.run_id;
  sum.planned = static_cast<int>(plan.jobs.size());
  sum.skipped = static_cast<int>(rp->done.size());
  if (describe)
    if (auto st = describe(nullptr); !st) return st.fail();

  std::vector<const Job*> todo;
  for (const auto& j : plan.jobs)
    if (!rp->done.count(j.key)) todo.push_back(&j);
  print_header(out, o, plan, dir.dir(), *rp, todo.size());

  int concurrency = std::max(1, o.concurrency);
  if (!todo.empty()) {
    auto admitted = runner.admit(concurrency, out);
    if (!admitted) return admitted.fail();
    concurrency = *admitted;
  }
  sum.concurrency = concurrency;

  Progress progress(out, o.tty, plan.jobs.size(), rp->done.size());
  if (o.log_sink) o.log_sink->attach([&progress](const std::string& line) { progress.event(line); });
  Scheduler scheduler(o, runner, **state, dir, progress, rp->done.size(), plan.jobs.size());
  scheduler.run(todo, concurrency);
  if (auto ps = scheduler.pool_stats())
    progress.event("  warm pool: " + std::to_string(ps->prepared) + " sandbox(es) prepared ahead, " +
                   std::to_string(ps->taken) + " taken, " + std::to_string(ps->discarded) + " discarded, " +
                   std::to_string(ps->frozen) + " frozen while they waited, " + std::to_string(ps->cold) +
                   " trial(s) brought up their own");
  if (o.log_sink) o.log_sink->detach();
  progress.close();
  if (auto e = scheduler.write_error()) return fail(e->with_context("recording trial results"));
  sum.ran = scheduler.ran();
  sum.interrupted = scheduler.interrupted();
  sum.stopped = scheduler.stopped();
  sum.setup_error = scheduler.setup_error();
  if (auto ps = scheduler.pool_stats()) sum.pool = *ps;

  auto records = tally(dir.dir(), keys, o.max_infra_rate, sum);
  sum.leaks = runner.leak_audit();
  sum.elapsed = elapsed_since(start);
  if (describe)
    if (auto st = describe(&sum); !st) return st.fail();
  // Everything is recorded by now: a crash while rendering must say so, and exit 1, not die by a signal.
  CrashNote note("writing the reports of " + dir.dir() + " crashed; every trial is recorded in " + dir.dir() +
                 "/trials.jsonl and run.json: write the reports again with: forgectl report " + dir.dir());
  results::AggregateOptions report_options;
  report_options.max_infra_rate = o.max_infra_rate;
  if (auto st = results::write_reports(dir.dir(), records, report_options); !st) return st.fail();
  return sum;
}

}  // namespace forge::sweep
