// Running a sweep's trials with no Docker engine.
#include "sweep/local_runner.h"

#include "engine/transport.h"
#include "sweep/docker_runner.h"
#include "trial/local_trial.h"

namespace forge::sweep {

namespace {

// The engine of a run without one: every call is an error saying so.
class NoEngine final : public engine::Transport {
 public:
  Result<engine::Response> send(const engine::Request& r) override { return fail(refuse(r)); }
  Result<engine::Response> stream(const engine::Request& r, const engine::ChunkSink&) override {
    return fail(refuse(r));
  }
  Result<std::unique_ptr<engine::Stream>> hijack(const engine::Request& r) override { return fail(refuse(r)); }
  std::string describe() const override { return "no engine"; }
  bool is_local() const override { return false; }

 private:
  static Error refuse(const engine::Request& r) {
    return make_error(Errc::kUnavailable, std::string("this run uses no Docker engine (every task is on the local "
                                                      "executor, none with test scripts): ") +
                                              engine::method_name(r.method) + " " + r.target);
  }
};

}  // namespace

LocalTrialRunner::LocalTrialRunner(trial::TrialEnv base, trial::Admission& admission, const results::RunDir& dir)
    : base_(std::move(base)),
      admission_(admission),
      dir_(dir),
      no_engine_(std::make_unique<engine::Client>(std::make_shared<NoEngine>())) {}

Result<int> LocalTrialRunner::admit(int concurrency, std::ostream&) {
  if (!base_.keep_local) trial::clear_local_root(base_.local_root);
  return concurrency;
}

Attempt LocalTrialRunner::run(const Job& job, int attempt) {
  trial::TrialEnv env = base_;
  env.docker = no_engine_.get();
  env.admission = &admission_;
  env.record_dir = record_dir_of(job, dir_);
  return finish_attempt(trial::run_trial(*job.task, job.index, attempt, job.agent, env), job, "", dir_);
}

std::vector<std::string> LocalTrialRunner::leak_audit() {
  if (base_.keep_local) return {};
  return trial::local_leftovers(base_.local_root);
}

}  // namespace forge::sweep
