// The sweep's scheduling on a fake TrialRunner: each outcome lands where docs/errors.md says
// (infra errors retried in a fresh attempt and outside every rate, a setup error stopping the
// run with nothing recorded, an interruption leaving the trial for --resume), and a run resumed
// after an interruption at any trial ends with the same aggregate as one that never stopped.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <sstream>
#include <string>
#include <vector>

#include "core/files.h"
#include "core/strings.h"
#include "results/run_dir.h"
#include "stack/background_teardown.h"
#include "sweep/run.h"

using namespace forge;
using namespace forge::sweep;
using results::InfraKind;
using results::Outcome;

namespace {

namespace fs = std::filesystem;

struct Dir {
  fs::path path = fs::temp_directory_path() / ("forgectl-schedule-" + random_hex(6));
  Dir() { fs::create_directories(path); }
  ~Dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string str() const { return path.string(); }
};

// What the fake does for one attempt of a trial ("<task>#<idx>", attempt): default graded with a
// pass on even indexes.
struct Script {
  Outcome outcome = Outcome::kGraded;
  InfraKind kind = InfraKind::kNone;
  bool interrupted = false;
  bool pass = true;
};

class FakeRunner final : public TrialRunner {
 public:
  std::map<std::string, std::vector<Script>> scripts;  // per trial, per attempt (the last repeats)
  std::atomic<int>* interrupt_counter = nullptr;        // set to 1 when a script interrupts
  std::vector<std::string> calls;
  std::mutex mu;

  // The warm pool and background teardown, as the Docker runner does them: a prepared sandbox is
  // a numbered object made for one job; finished trials' and discarded sandboxes' removals run on
  // a BackgroundTeardown, and leak_audit() drains it, then lists what is still "live".
  int capacity = 0;
  Millis teardown_delay{0};
  std::set<std::string> live;                   // sandboxes that exist (prepared or cold)
  std::vector<std::string> prepared_for;        // "<task>#<idx>" per prepare(), in order
  std::map<std::string, int> taken;             // sandbox → times a trial ran in it
  std::vector<std::string> discarded;
  std::set<std::string> frozen, thawed_by_run;  // paused while waiting; run after being paused
  Millis prepare_delay{0};
  std::atomic<int> outstanding{0}, peak_outstanding{0};
  int sandbox_seq = 0;
  stack::BackgroundTeardown teardown{nullptr, 4, nullptr};

  // The first wave's first turns (docs/sweeps.md "The first wave"): asked for every job when
  // true; which were asked before their sandbox was prepared, and which attempts were handed one.
  bool first_turns = false;
  std::vector<std::string> turn_before_ready, handed_turn;

  struct FakePrepared final : Prepared {
    std::string sandbox, job;
  };

  Result<int> admit(int concurrency, std::ostream&) override { return concurrency; }
  std::unique_ptr<trial::FirstTurn> start_first_turn(const Job& job) override {
    if (!first_turns) return nullptr;
    std::string id = job.task->task_id + "#" + std::to_string(job.index);
    std::lock_guard lock(mu);
    if (std::find(prepared_for.begin(), prepared_for.end(), id) == prepared_for.end()) turn_before_ready.push_back(id);
    return std::make_unique<trial::FirstTurn>();
  }
  std::vector<std::string> leak_audit() override {
    teardown.drain();
    std::lock_guard lock(mu);
    return {live.begin(), live.end()};
  }
  int pool_capacity() override { return capacity; }
  std::unique_ptr<Prepared> prepare(const Job& job) override {
    int now = ++outstanding;
    for (int seen = peak_outstanding.load(); now > seen && !peak_outstanding.compare_exchange_weak(seen, now);) {
    }
    std::this_thread::sleep_for(prepare_delay);
    auto p = std::make_unique<FakePrepared>();
    p->job = job.task->task_id + "#" + std::to_string(job.index);
    std::lock_guard lock(mu);
    p->sandbox = "sandbox-" + std::to_string(++sandbox_seq);
    live.insert(p->sandbox);
    prepared_for.push_back(p->job);
    return p;
  }
  Attempt run_prepared(const Job& job, int attempt, std::unique_ptr<Prepared> p) override {
    auto& fp = dynamic_cast<FakePrepared&>(*p);
    --outstanding;
    {
      std::lock_guard lock(mu);
      CHECK(fp.job == job.task->task_id + "#" + std::to_string(job.index));  // made for this job alone
      ++taken[fp.sandbox];
      if (frozen.count(fp.sandbox)) thawed_by_run.insert(fp.sandbox);
    }
    return run_in(job, attempt, fp.sandbox);
  }
  bool freeze(Prepared& p) override {
    std::lock_guard lock(mu);
    frozen.insert(dynamic_cast<FakePrepared&>(p).sandbox);
    return true;
  }
  void discard(std::unique_ptr<Prepared> p) override {
    auto& fp = dynamic_cast<FakePrepared&>(*p);
    --outstanding;
    {
      std::lock_guard lock(mu);
      discarded.push_back(fp.sandbox);
    }
    remove_later(fp.sandbox);
  }
  void remove_later(const std::string& sandbox) {
    teardown.submit([this, sandbox] {
      std::this_thread::sleep_for(teardown_delay);
      std::lock_guard lock(mu);
      live.erase(sandbox);
    });
  }

  Attempt run(const Job& job, int attempt) override {
    std::string sandbox;
    {
      std::lock_guard lock(mu);
      sandbox = "cold-" + std::to_string(++sandbox_seq);
      live.insert(sandbox);
    }
    return run_in(job, attempt, sandbox);
  }

  Attempt run_in(const Job& job, int attempt, const std::string& sandbox) {
    struct Removal {
      FakeRunner* r;
      std::string s;
      ~Removal() { r->remove_later(s); }  // the trial's down: handed to the background
    } removal{this, sandbox};
    std::string id = job.task->task_id + "#" + std::to_string(job.index);
    Script s;
    {
      std::lock_guard lock(mu);
      calls.push_back(id + "@" + std::to_string(attempt));
      if (job.first_turn) handed_turn.push_back(id + "@" + std::to_string(attempt));
      auto it = scripts.find(id);
      int n = 0;
      for (const auto& c : calls) n += starts_with(c, id + "@");
      if (it != scripts.end() && !it->second.empty()) s = it->second[std::min<std::size_t>(n - 1, it->second.size() - 1)];
      else s.pass = job.index % 2 == 0;
    }
    if (s.interrupted && interrupt_counter) interrupt_counter->store(1);
    Attempt a;
    a.interrupted = s.interrupted;
    a.stops_run = s.outcome == Outcome::kSetupError;
    auto& r = a.record;
    r.task_id = job.task->task_id;
    r.trial_index = job.index;
    r.attempt = attempt;
    r.agent = job.agent.label();
    r.trial_key = job.key;
    r.outcome = s.outcome;
    r.infra_kind = s.kind;
    r.binary_pass = s.outcome == Outcome::kGraded && s.pass;
    r.score = r.binary_pass ? 1.0 : 0.0;
    r.termination_reason = "agent_done";
    r.trial_dir = "trials/" + r.task_id + "/" + std::to_string(r.trial_index);
    r.started_at = r.finished_at = "2026-12-01T00:00:00Z";  // byte-identical aggregates across runs
    if (s.outcome != Outcome::kGraded) r.error = "scripted " + std::string(results::to_string(s.outcome));
    return a;
  }
};

// Two tasks × one agent × `trials`.
struct FakePlan {
  Plan plan;
  explicit FakePlan(int trials) {
    plan.tasks.resize(2);
    plan.tasks[0].task_id = "alpha";
    plan.tasks[1].task_id = "beta";
    plan.agent_count = 1;
    plan.trials = trials;
    plan.facts.config_hash = "fake";
    for (const auto& t : plan.tasks)
      for (int i = 0; i < trials; ++i) {
        Job j;
        j.task = &t;
        j.index = i;
        j.key = t.task_id + "-" + std::to_string(i);
        plan.jobs.push_back(j);
      }
  }
};

struct Sweep {
  Dir dir;
  std::atomic<int> interrupted{0};
  std::ostringstream out;
  RunOptions opts;
  Sweep() {
    opts.run_id = "fake01";
    opts.interrupted = &interrupted;
    opts.retries = 2;
  }
  Result<RunSummary> run(const Plan& plan, FakeRunner& runner, bool resume = false) {
    opts.resume = resume;
    interrupted.store(0);
    runner.interrupt_counter = &interrupted;
    auto rd = results::RunDir::open(dir.str(), {});
    REQUIRE(rd.has_value());
    return run_sweep(opts, plan, runner, *rd, {}, out);
  }
  std::string aggregate() const {
    auto text = read_text(dir.path / "aggregate.json");
    REQUIRE(text.has_value());
    return *text;
  }
  std::vector<results::TrialRecord> records() const {
    auto log = results::read_trials_jsonl((dir.path / "trials.jsonl").string());
    if (!log) return {};
    return log->trials;
  }
};

}  // namespace

TEST_CASE("schedule: every trial graded; the summary counts them") {
  FakePlan p(2);
  FakeRunner runner;
  Sweep s;
  auto sum = s.run(p.plan, runner);
  REQUIRE_MESSAGE(sum.has_value(), (sum ? "" : sum.error().what()));
  CHECK(sum->trials == 4);
  CHECK(sum->graded == 4);
  CHECK(sum->passed == 2);
  CHECK(sum->infra_errors == 0);
  CHECK_FALSE(sum->setup_error);
  CHECK(s.records().size() == 4);
}

TEST_CASE("schedule: an infra error is retried in a new attempt; out of retries it is recorded outside every rate") {
  FakePlan p(1);
  FakeRunner runner;
  runner.scripts["alpha#0"] = {{Outcome::kInfraError, InfraKind::kProvider}, {Outcome::kGraded}};  // recovers
  runner.scripts["beta#0"] = {{Outcome::kInfraError, InfraKind::kSandbox}};                         // never does
  Sweep s;
  auto sum = s.run(p.plan, runner);
  REQUIRE(sum.has_value());
  CHECK(sum->graded == 1);
  CHECK(sum->passed == 1);
  CHECK(sum->infra_errors == 1);
  // alpha: attempt 1 failed, attempt 2 graded; beta: 1 + retries (2) = 3 attempts.
  auto recs = s.records();
  REQUIRE(recs.size() == 2);
  for (const auto& r : recs) {
    if (r.task_id == "alpha") {
      CHECK(r.outcome == Outcome::kGraded);
      CHECK(r.attempt == 2);
    } else {
      CHECK(r.outcome == Outcome::kInfraError);
      CHECK(r.infra_kind == InfraKind::kSandbox);
      CHECK(r.attempt == 3);
    }
  }
  CHECK(s.out.str().find("retry beta#0") != std::string::npos);
  // The aggregate's pass rate is 1/1: the infra error is in no denominator.
  std::string agg = s.aggregate();
  CHECK(agg.find("\"infra_errors\": 1") != std::string::npos);
  CHECK(agg.find("\"graded\": 1") != std::string::npos);
}

TEST_CASE("schedule: a setup error stops the run, is never retried, and records nothing") {
  FakePlan p(3);
  FakeRunner runner;
  runner.scripts["alpha#0"] = {{Outcome::kSetupError}};
  Sweep s;
  s.opts.concurrency = 1;  // in order: alpha#0 first, nothing after it
  auto sum = s.run(p.plan, runner);
  REQUIRE(sum.has_value());
  CHECK(sum->setup_error);
  CHECK(sum->stopped.find("alpha") != std::string::npos);
  CHECK(runner.calls == std::vector<std::string>{"alpha#0@1"});
  CHECK(sum->trials == 0);
  CHECK(s.records().empty());
  // After the fix, --resume runs it (and everything else).
  runner.scripts.clear();
  auto again = s.run(p.plan, runner, /*resume=*/true);
  REQUIRE(again.has_value());
  CHECK_FALSE(again->setup_error);
  CHECK(again->trials == 6);
}

TEST_CASE("schedule: resumed after an interruption at any trial, the aggregate equals an uninterrupted run's") {
  FakePlan p(3);
  std::string reference;
  {
    FakeRunner runner;
    Sweep s;
    s.opts.concurrency = 1;
    REQUIRE(s.run(p.plan, runner).has_value());
    reference = s.aggregate();
  }
  for (std::size_t at = 0; at < p.plan.jobs.size(); ++at) {
    CAPTURE(at);
    const Job& j = p.plan.jobs[at];
    FakeRunner runner;
    runner.scripts[j.task->task_id + "#" + std::to_string(j.index)] = {
        {Outcome::kGraded, InfraKind::kNone, /*interrupted=*/true}, {Outcome::kGraded, InfraKind::kNone, false, j.index % 2 == 0}};
    Sweep s;
    s.opts.concurrency = 1;
    auto first = s.run(p.plan, runner);
    REQUIRE(first.has_value());
    CHECK(first->interrupted == 1);
    CHECK(static_cast<std::size_t>(first->trials) == at);  // nothing after the interruption started
    auto second = s.run(p.plan, runner, /*resume=*/true);
    REQUIRE(second.has_value());
    CHECK(second->trials == 6);
    CHECK(second->skipped == static_cast<int>(at));
    CHECK(s.aggregate() == reference);
  }
}

// ---- the warm pool and background teardown on the fake runner --------------------------------

TEST_CASE("schedule: with a warm pool the results equal a run without; each prepared sandbox serves its own job once") {
  FakePlan p(8);  // 16 trials
  FakeRunner cold;
  Sweep s1;
  auto a = s1.run(p.plan, cold);
  REQUIRE(a.has_value());
  FakeRunner warm;
  warm.capacity = 3;
  Sweep s2;
  s2.opts.concurrency = 2;
  auto b = s2.run(p.plan, warm);
  REQUIRE(b.has_value());
  CHECK(s1.aggregate() == s2.aggregate());
  CHECK(b->graded == 16);
  CHECK(b->pool.prepared > 0);
  CHECK(b->pool.prepared == b->pool.taken + b->pool.discarded);
  CHECK(b->pool.peak <= 3);
  // Bounded: never more ready or in preparation than the capacity. The pool frees a place when a
  // worker takes its sandbox; the fake counts it until run_prepared() starts, so each of the two
  // workers may be one behind.
  CHECK(warm.peak_outstanding.load() <= 3 + 2);
  for (const auto& [sandbox, n] : warm.taken) CHECK_MESSAGE(n == 1, sandbox << " taken " << n << " times");
  std::set<std::string> jobs(warm.prepared_for.begin(), warm.prepared_for.end());
  CHECK(jobs.size() == warm.prepared_for.size());  // never two sandboxes for one job
  // Every trial, the first wave's too, is claimed in a sandbox prepared for it: none brings up its own.
  CHECK(b->pool.cold == 0);
  CHECK(b->pool.taken == 16);
  CHECK(jobs.size() == 16);
  // Frozen only while nobody waited, and each frozen one thawed by its own trial's run.
  CHECK(b->pool.frozen == static_cast<int>(warm.frozen.size()));
  CHECK(warm.thawed_by_run == warm.frozen);
  CHECK(b->leaks.empty());
}

TEST_CASE("schedule: a first attempt is handed its first turn, asked before it waits for its sandbox; a retry is not") {
  FakePlan p(2);  // 4 trials
  FakeRunner warm;
  warm.capacity = 2;
  warm.first_turns = true;
  warm.prepare_delay = Millis(150);
  warm.scripts["alpha#0"] = {{Outcome::kInfraError, InfraKind::kDaemon}, {}};
  Sweep s;
  s.opts.concurrency = 2;
  auto r = s.run(p.plan, warm);
  REQUIRE(r.has_value());
  CHECK(r->graded == 4);
  // The first wave's turns came while the pool still prepared their sandboxes.
  CHECK(warm.turn_before_ready.size() >= 2);
  std::set<std::string> handed(warm.handed_turn.begin(), warm.handed_turn.end());
  CHECK(handed == std::set<std::string>{"alpha#0@1", "alpha#1@1", "beta#0@1", "beta#1@1"});  // never alpha#0@2
  CHECK(r->leaks.empty());
}

TEST_CASE("schedule: the pool is bounded by the remaining work: no more sandboxes than trials left") {
  FakePlan p(2);  // 4 trials
  FakeRunner warm;
  warm.capacity = 50;
  Sweep s;
  s.opts.concurrency = 3;
  auto sum = s.run(p.plan, warm);
  REQUIRE(sum.has_value());
  CHECK(warm.prepared_for.size() <= 4);
  CHECK(sum->pool.peak <= 4);  // 4 trials, whatever the capacity
  CHECK(sum->graded == 4);
}

TEST_CASE(
    "schedule: a trial whose turn comes before its sandbox is ready waits for it instead of bringing up its own") {
  FakePlan p(3);  // 6 trials
  FakeRunner warm;
  warm.capacity = 1;  // one preparation at a time: every worker's turn comes first
  warm.prepare_delay = Millis(30);
  Sweep s;
  s.opts.concurrency = 3;
  auto sum = s.run(p.plan, warm);
  REQUIRE(sum.has_value());
  CHECK(sum->graded == 6);
  CHECK(sum->pool.taken == 6);
  CHECK(sum->pool.cold == 0);
  CHECK(warm.peak_outstanding.load() <= 1 + 3);
}

TEST_CASE("schedule: an interruption drains the pool: every prepared sandbox not taken is discarded and removed") {
  FakePlan p(10);  // 20 trials
  FakeRunner warm;
  warm.capacity = 4;
  warm.teardown_delay = Millis(20);
  warm.scripts["alpha#1"] = {Script{Outcome::kGraded, InfraKind::kNone, true, true}};
  Sweep s;
  s.opts.concurrency = 1;
  auto sum = s.run(p.plan, warm);
  REQUIRE(sum.has_value());
  CHECK(sum->interrupted >= 1);
  CHECK(sum->pool.discarded > 0);
  CHECK(sum->pool.prepared == sum->pool.taken + sum->pool.discarded);
  CHECK(warm.discarded.size() == static_cast<std::size_t>(sum->pool.discarded));
  for (const auto& d : warm.discarded) CHECK(warm.taken.count(d) == 0);  // discarded ones were never run in
  CHECK(warm.outstanding.load() == 0);
  // The leak audit waited for the background removals (each 20 ms): nothing is left.
  CHECK_MESSAGE(sum->leaks.empty(), sum->leaks.size() << " left");
  // Resumable: the interrupted trial and the ones never started run on resume.
  warm.scripts.clear();
  auto again = s.run(p.plan, warm, true);
  REQUIRE(again.has_value());
  CHECK(again->trials == 20);
}

TEST_CASE("schedule: a setup error stops the pool too: nothing prepared is left behind") {
  FakePlan p(10);
  FakeRunner warm;
  warm.capacity = 4;
  warm.scripts["alpha#2"] = {Script{Outcome::kSetupError}};
  Sweep s;
  s.opts.concurrency = 2;
  auto sum = s.run(p.plan, warm);
  REQUIRE(sum.has_value());
  CHECK(sum->setup_error);
  CHECK(sum->pool.prepared == sum->pool.taken + sum->pool.discarded);
  CHECK(sum->leaks.empty());
}

TEST_CASE("schedule: the leak audit waits for background teardown of every finished trial") {
  FakePlan p(3);
  FakeRunner r;
  r.teardown_delay = Millis(50);
  Sweep s;
  s.opts.concurrency = 6;
  auto sum = s.run(p.plan, r);
  REQUIRE(sum.has_value());
  CHECK(sum->leaks.empty());
  CHECK(r.teardown.pending() == 0);
}
