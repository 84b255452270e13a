// The TrialRunner that runs trials for real: each on the least busy Docker engine of the pool,
// through trial::run_trial, its files written into the run directory. It prepares sandboxes for
// the warm pool (warm_pool.h) and removes finished trials' stacks in the background.
#pragma once

#include <cstdint>
#include <string>

#include "results/run_dir.h"
#include "stack/background_teardown.h"
#include "sweep/hosts.h"
#include "sweep/trial_runner.h"
#include "trial/trial.h"

namespace forge::sweep {

// What every runner does with a finished attempt: the trial's identity across runs, where it ran
// (`docker_host`, empty for none), its files under trials/ when it has a result, and its record.
Attempt finish_attempt(trial::TrialResult r, const Job& job, const std::string& docker_host,
                       const results::RunDir& dir);
// The job's directory under DIR/trials/, where its screenshots go as they are taken
// (trial::TrialEnv::record_dir) and finish_attempt writes its files.
std::string record_dir_of(const Job& job, const results::RunDir& dir);

// What one trial holds on the host, for admission before the first trial (admit).
inline constexpr int kFdsPerTrial = 8;     // keep-alive API connections, the helper's exec, json-db, the model
inline constexpr int kFdsBase = 64;        // the run's own: state, logs, the engines' first connections
inline constexpr int kSandboxMib = 24;     // an idle container of the built-in images, measured (docs/sweeps.md)
inline constexpr int kTeardownThreads = 16;  // background removals at once are the down admission's to limit

class DockerTrialRunner final : public TrialRunner {
 public:
  // `base` carries the run config, models, budget, run id, log, settings and interrupt counter;
  // its docker and admission fields are set per trial. `networks_per_trial` sizes subnet
  // admission; `sandboxes_per_trial` (containers, the most any task's stack has) memory admission.
  // `warm_pool`: sandboxes held ready ahead (-1: as many as the concurrency, within memory and
  // subnets; 0: none). `memory_limit_mib`: the most any task's containers may use together (their
  // limits; 0: unknown), which only warns (host_fit.h).
  DockerTrialRunner(trial::TrialEnv base, HostPool& hosts, trial::Admission& admission, const results::RunDir& dir,
                    int networks_per_trial, int containers_per_trial = 2, int warm_pool = 0,
                    std::uint64_t memory_limit_mib = 0);

  Result<int> admit(int concurrency, std::ostream& progress) override;
  Attempt run(const Job& job, int attempt) override;
  std::vector<std::string> leak_audit() override;
  int pool_capacity() override { return pool_capacity_; }
  std::unique_ptr<Prepared> prepare(const Job& job) override;
  Attempt run_prepared(const Job& job, int attempt, std::unique_ptr<Prepared> p) override;
  std::unique_ptr<trial::FirstTurn> start_first_turn(const Job& job) override;
  bool freeze(Prepared& p) override;
  void discard(std::unique_ptr<Prepared> p) override;

 private:
  trial::TrialEnv base_;
  HostPool& hosts_;
  trial::Admission& admission_;
  const results::RunDir& dir_;
  int networks_per_trial_;
  int containers_per_trial_;
  int warm_pool_;
  std::uint64_t memory_limit_mib_;
  int pool_capacity_ = 0;
  stack::BackgroundTeardown teardown_;
};

}  // namespace forge::sweep
