// Running trials on Docker engines.
#include "sweep/docker_runner.h"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <optional>
#include <ostream>

#include "core/json.h"
#include "core/service_token.h"
#include "core/strings.h"
#include "policy/subnets.h"
#include "stack/inventory.h"
#include "sweep/host_fit.h"
#include "trial/local_trial.h"
#include "trial/sandbox_prep.h"
#include "trial/trial_files.h"

namespace forge::sweep {

namespace {

std::string task_summary_yaml(const manifest::TaskConfig& t, int idx) {
  std::string out = "task_id: " + t.task_id + "\ntrial_index: " + std::to_string(idx) + "\ncategory: " + t.category +
                    "\nname: " + t.name + "\ngrading: " + t.grading.path + "\n";
  // Quoted as JSON strings (valid YAML): a tag may hold ": " or "#".
  auto quoted = [](const std::string& v) { return json::Writer().str(v).take(); };
  if (!t.complexity.empty()) out += "difficulty: " + quoted(t.complexity) + "\n";
  if (!t.tags.empty()) {
    out += "tags:\n";
    for (const auto& tag : t.tags) out += "  - " + quoted(tag) + "\n";
  }
  return out;
}

// Times a trial from its claim (a prepared trial: from taking it): until its tools are open
// (the agent phase begins) and until its first tool call returned; phases_s records both
// (claim_to_ready, claim_to_first_tool).
class ClaimClock {
 public:
  explicit ClaimClock(std::function<void(const trial::TrialProgress&)> inner) : inner_(std::move(inner)) {}
  std::function<void(const trial::TrialProgress&)> ear() {
    return [t = times_, claim = claim_, inner = inner_](const trial::TrialProgress& p) {
      if (!t->ready && p.phase == "agent") t->ready = elapsed_since(claim);
      if (!t->first_tool && p.tool_calls > 0) t->first_tool = elapsed_since(claim);
      if (inner) inner(p);
    };
  }
  void record(trial::TrialResult& r) const {
    if (times_->ready) r.phases["claim_to_ready"] = *times_->ready;
    if (times_->first_tool) r.phases["claim_to_first_tool"] = *times_->first_tool;
  }

 private:
  struct Times {
    std::optional<Millis> ready, first_tool;
  };
  std::shared_ptr<Times> times_ = std::make_shared<Times>();  // written from the trial's threads, serialised per trial
  Clock::time_point claim_ = Clock::now();
  std::function<void(const trial::TrialProgress&)> inner_;
};

}  // namespace

DockerTrialRunner::DockerTrialRunner(trial::TrialEnv base, HostPool& hosts, trial::Admission& admission,
                                     const results::RunDir& dir, int networks_per_trial, int containers_per_trial,
                                     int warm_pool, std::uint64_t memory_limit_mib)
    : base_(std::move(base)),
      hosts_(hosts),
      admission_(admission),
      dir_(dir),
      networks_per_trial_(networks_per_trial),
      containers_per_trial_(std::max(1, containers_per_trial)),
      warm_pool_(warm_pool),
      memory_limit_mib_(memory_limit_mib),
      teardown_(&admission.down, kTeardownThreads, base_.log) {
  base_.teardown = &teardown_;
}

namespace {

// This host's available memory in MiB (MemAvailable), or nullopt.
std::optional<std::uint64_t> mem_available_mib() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb / 1024;
  return std::nullopt;
}

}  // namespace

// Lowers the concurrency to what the host can give every trial at once — subnets on every engine,
// file descriptors, memory on a local engine (host_fit.h) — so trials wait here instead of failing
// in `up`, and sizes the warm pool within what is left.
Result<int> DockerTrialRunner::admit(int concurrency, std::ostream& progress) {
  if (!base_.keep_local) trial::clear_local_root(base_.local_root);  // a killed run's local sandboxes
  HostLimits limits;

  // Subnets: a /28 per network per trial, on every engine (network-free stacks need none).
  if (networks_per_trial_ > 0) {
    auto pool = policy::SubnetPool::from_settings(base_.host);
    if (!pool) return pool.fail();
    std::uint64_t fits_all = 0;
    for (auto& e : hosts_.engines()) {
      auto free = pool->free_count(28, [&] { return stack::daemon_subnets(*e->client); });
      if (!free) return free.fail_with(e->address);
      std::uint64_t trials = std::min<std::uint64_t>(*free / static_cast<std::uint64_t>(networks_per_trial_), 1u << 20);
      if (trials == 0)
        return fail(Errc::kUnavailable, e->address + ": the subnet pool " + pool->pool().str() +
                                            " has no free /28 left; remove stale stacks (forgectl down --orphans) or set "
                                            "FORGECTL_SUBNET_POOL to a larger range");
      fits_all += trials;
    }
    limits.subnet_trials = fits_all;
    limits.subnet_note =
        "the subnet pool " + pool->pool().str() + " (" + std::to_string(networks_per_trial_) + " network(s) a trial)";
  }

  // File descriptors: the soft limit raised to the hard one first.
  rlimit nofile{};
  if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
    if (nofile.rlim_cur < nofile.rlim_max) {
      rlimit raised = nofile;
      raised.rlim_cur = nofile.rlim_max == RLIM_INFINITY ? std::max<rlim_t>(nofile.rlim_cur, 1 << 20) : nofile.rlim_max;
      if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) nofile = raised;
    }
    limits.nofile = static_cast<std::uint64_t>(nofile.rlim_cur);
  }

  // Memory, when the engine runs here.
  bool local = !hosts_.engines().empty() && starts_with(hosts_.engines().front()->address, "unix://");
  if (local) limits.mem_available_mib = mem_available_mib();

  TrialNeeds need;
  need.fds = kFdsPerTrial;
  need.fds_base = kFdsBase;
  need.rest_mib = static_cast<std::uint64_t>(containers_per_trial_) * kSandboxMib;
  need.limit_mib = memory_limit_mib_;
  auto fit = fit_to_host(concurrency, warm_pool_, limits, need);
  if (!fit) return fit.fail_with("checking this host's limits before the first trial");
  for (const auto& m : fit->messages) progress << "forgectl run: " << m << '\n';
  pool_capacity_ = fit->pool;
  return fit->concurrency;
}

namespace {

// The job's first turn, asked already, moved out for its trial (only one attempt takes it).
std::unique_ptr<trial::FirstTurn> take_first_turn(const Job& job) {
  if (!job.first_turn || !job.first_turn->turn) return nullptr;
  return std::make_unique<trial::FirstTurn>(std::move(*job.first_turn));
}

// A trial the warm pool prepared for one job (its first phases run, its stack maybe frozen), on
// the engine it was made on (counted busy there).
struct DockerPrepared final : Prepared {
  EngineSlot* engine = nullptr;
  std::unique_ptr<trial::PreparedTrial> trial;
};

}  // namespace

std::unique_ptr<Prepared> DockerTrialRunner::prepare(const Job& job) {
  if (trial::runs_locally(*job.task)) return nullptr;
  EngineSlot& engine = hosts_.acquire();
  trial::TrialEnv env = base_;
  env.docker = engine.client.get();
  env.engine_info = engine.info ? &*engine.info : nullptr;
  env.engine_is_local = starts_with(engine.address, "unix://");
  env.admission = &admission_;  // its up waits at kAhead: only while no trial waits for a slot
  env.record_dir = record_dir_of(job, dir_);
  auto t = trial::prepare_trial(*job.task, job.index, job.agent, env);
  if (!t) {
    hosts_.release(engine);
    if (base_.log && !(base_.interrupted && base_.interrupted->load() > 0))
      base_.log->debug("warm pool: " + job.task->task_id + "#" + std::to_string(job.index) +
                       " will bring up its own sandbox: " + t.error().what());
    return nullptr;
  }
  auto p = std::make_unique<DockerPrepared>();
  p->engine = &engine;
  p->trial = std::move(*t);
  return p;
}

bool DockerTrialRunner::freeze(Prepared& p) {
  auto* d = dynamic_cast<DockerPrepared*>(&p);
  return d && d->trial->freeze();
}

void DockerTrialRunner::discard(std::unique_ptr<Prepared> p) {
  auto* d = dynamic_cast<DockerPrepared*>(p.get());
  if (!d) return;
  d->trial.reset();  // its tools closed, its stack handed to the background teardown
  hosts_.release(*d->engine);
}

std::unique_ptr<trial::FirstTurn> DockerTrialRunner::start_first_turn(const Job& job) {
  trial::TrialEnv env = base_;
  env.admission = &admission_;
  return trial::start_first_turn(*job.task, job.index, job.agent, env);
}

Attempt DockerTrialRunner::run(const Job& job, int attempt) {
  EngineSlot& engine = hosts_.acquire();
  trial::TrialEnv env = base_;
  env.docker = engine.client.get();
  env.engine_info = engine.info ? &*engine.info : nullptr;
  env.engine_is_local = starts_with(engine.address, "unix://");
  env.admission = &admission_;
  env.record_dir = record_dir_of(job, dir_);
  ClaimClock clock(job.on_progress);
  env.on_progress = clock.ear();
  trial::TrialResult r = trial::run_trial(*job.task, job.index, attempt, job.agent, env, take_first_turn(job));
  clock.record(r);
  hosts_.release(engine);
  return finish_attempt(std::move(r), job, engine.address, dir_);
}

Attempt DockerTrialRunner::run_prepared(const Job& job, int attempt, std::unique_ptr<Prepared> p) {
  auto* d = dynamic_cast<DockerPrepared*>(p.get());
  if (!d) return run(job, attempt);
  EngineSlot& engine = *d->engine;  // the slot acquired in prepare
  ClaimClock clock(job.on_progress);
  trial::TrialResult r = trial::finish_trial(std::move(d->trial), attempt, clock.ear(), take_first_turn(job));
  clock.record(r);
  hosts_.release(engine);
  return finish_attempt(std::move(r), job, engine.address, dir_);
}

std::string record_dir_of(const Job& job, const results::RunDir& dir) {
  const std::string rel = job.rel_dir.empty() ? job.task->task_id + "/" + std::to_string(job.index) : job.rel_dir;
  return dir.dir() + "/trials/" + rel;
}

Attempt finish_attempt(trial::TrialResult r, const Job& job, const std::string& docker_host,
                       const results::RunDir& dir) {
  r.trial_key = job.key;
  r.docker_host = docker_host;
  r.rel_dir = job.rel_dir;
  r.task_name = job.task->name;
  r.category = job.task->category;
  r.difficulty = job.task->complexity;
  r.tags = job.task->tags;
  r.expected_failure_modes = job.task->expected_failure_modes;
  Attempt a;
  a.record = trial::to_record(r);
  a.interrupted = r.interrupted;
  a.stops_run = r.stops_run;
  bool has_files = !r.interrupted && r.outcome != results::Outcome::kSetupError;
  if (has_files)
    if (auto st = trial::write_trial_files(dir, r, task_summary_yaml(*job.task, job.index)); !st) {
      // Without its files the trial cannot be recorded as a result: an infra error of the host.
      a.record.outcome = results::Outcome::kInfraError;
      a.record.infra_kind = results::InfraKind::kHost;
      a.record.error = st.error().what();
    }
  return a;
}

std::vector<std::string> DockerTrialRunner::leak_audit() {
  teardown_.drain();  // the background removals of finished trials and discarded sandboxes first
  std::vector<std::string> unremoved;
  if (base_.snapshots) unremoved = base_.snapshots->remove_all();  // the run's set-up snapshots, no trial left to fork
  auto left = sweep::leak_audit(hosts_, base_.run_id);
  for (auto& u : unremoved) left.push_back("snapshot image: " + std::move(u));
  if (!base_.keep_local)
    for (auto& l : trial::local_leftovers(base_.local_root)) left.push_back(std::move(l));
  return left;
}

}  // namespace forge::sweep
