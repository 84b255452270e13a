// The seam between scheduling and running: the sweep decides which trials run, when and how often
// (retries, resume, stops); a TrialRunner runs one attempt of one trial and writes its files.
// Unit tests drive the sweep with a fake runner.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "manifest/task_config.h"
#include "results/trial_record.h"
#include "trial/agent_choice.h"
#include "trial/trial.h"

namespace forge::sweep {

struct Job {
  const manifest::TaskConfig* task = nullptr;
  trial::AgentChoice agent;
  int index = 0;
  std::string key;      // trial_key(): content of task, images, agent, index
  std::string rel_dir;  // under trials/
  // The live view's ear: the runner passes it to the trial (trial::TrialEnv::on_progress).
  std::function<void(const trial::TrialProgress&)> on_progress;
  // The agent's first model turn, asked when the job's turn came (TrialRunner::start_first_turn),
  // for the attempt's trial to take; null: the trial decides for itself.
  std::shared_ptr<trial::FirstTurn> first_turn;
};

// What one attempt came to.
struct Attempt {
  results::TrialRecord record;  // outcome, kind, pass, cost … (trials.jsonl's line unless interrupted or setup error)
  bool interrupted = false;     // stopped by a signal before it could end: no result, left for --resume
  bool stops_run = false;       // a setup error or a provider key/model problem: no further trials
};

// A sandbox made ready ahead of a trial's turn by the warm pool (warm_pool.h), for that one job;
// what it holds is the runner's business.
struct Prepared {
  virtual ~Prepared() = default;
};

class TrialRunner {
 public:
  virtual ~TrialRunner() = default;
  // Before the first trial (the run lock held): the concurrency this runner can give (subnets,
  // engines), maybe lower; what a killed run left of its own on the host is cleared here.
  virtual Result<int> admit(int concurrency, std::ostream& progress) = 0;
  // One attempt. A graded trial and an infra error have their files written under trials/; an
  // interrupted attempt and a setup error leave nothing.
  virtual Attempt run(const Job& job, int attempt) = 0;
  // After the last trial: objects of this run still present ("<engine>: container <name>"),
  // once every background removal has ended.
  virtual std::vector<std::string> leak_audit() = 0;

  // The warm pool (warm_pool.h). How many sandboxes may be held ready ahead of the trials (after
  // admit: memory, subnets); 0, the default: none.
  virtual int pool_capacity() { return 0; }
  // A sandbox for exactly this job, made before its turn (called on the pool's threads); null
  // when the job gets none (it then brings up its own).
  virtual std::unique_ptr<Prepared> prepare(const Job&) { return nullptr; }
  // The job's turn has come and its prepared sandbox may not be ready: the agent's first model
  // turn, when it may be asked without the sandbox (trial::start_first_turn); null: none.
  virtual std::unique_ptr<trial::FirstTurn> start_first_turn(const Job&) { return nullptr; }
  // run() in a prepared sandbox (never null). The default removes it and runs as usual.
  virtual Attempt run_prepared(const Job& job, int attempt, std::unique_ptr<Prepared> p) {
    discard(std::move(p));
    return run(job, attempt);
  }
  // A prepared sandbox whose trial is not waiting for it yet: paused until its turn (no CPU
  // while idle); false when it was left running.
  virtual bool freeze(Prepared&) { return false; }
  // A prepared sandbox that no trial will take (the run stopped or was interrupted): removed.
  virtual void discard(std::unique_ptr<Prepared>) {}
};

}  // namespace forge::sweep
