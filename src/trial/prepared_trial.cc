// A trial's first phases run ahead of its turn (the warm pool): its helper started, its stack paused.
#include "trial/trial_run.h"

#include <set>

#include "core/files.h"
#include "core/parallel.h"
#include "engine/containers.h"
#include "tools/container_sandbox.h"

namespace forge::trial {

using results::InfraKind;

// Ahead of the turn, after begin(): the helper started now (its exec and handshake are not the
// first tool call's), so the turn's first call is one request on an open channel.
Step TrialRun::start_helper() {
  if (local_ || !tools_.sandbox) return std::nullopt;
  auto* box = dynamic_cast<tools::ContainerSandbox*>(tools_.sandbox.get());
  if (!box) return std::nullopt;
  if (auto pong = box->channel().call(R"({"op":"ping"})", Deadline::in(Millis(30000))); !pong)
    return classify_running(pong.error(), InfraKind::kSandbox);
  return std::nullopt;
}

// The stack's containers paused while the trial waits for its turn, in parallel; false (those
// paused so far unpaused again) when the daemon refused one. Not a container with a healthcheck:
// Docker keeps running its checks on a paused container, each fails, and after `retries` of them
// it is "unhealthy" — which the end of the agent phase would blame on the agent.
bool TrialRun::freeze() {
  if (!up_ || local_) return false;
  std::set<std::string> checked;
  for (const auto& c : up_->plan.services)
    if (c.healthcheck) checked.insert(c.key);
  if (up_->plan.proxy && up_->plan.proxy->healthcheck) checked.insert(up_->plan.proxy->key);
  if (up_->plan.runner.healthcheck) checked.insert(up_->plan.runner.key);
  std::vector<std::string> ids;
  for (const auto& [key, id] : up_->containers)
    if (!checked.count(key)) ids.push_back(id);
  if (ids.empty()) return false;
  std::vector<Status> st(ids.size());
  parallel_for(
      ids.size(), [&](std::size_t i) { st[i] = engine::pause_container(docker_, ids[i]); }, ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (st[i]) frozen_.push_back(ids[i]);
  if (frozen_.size() == ids.size()) return true;
  (void)thaw();
  return false;
}

// The turn: the stack unpaused, timed as "thaw".
Step TrialRun::thaw() {
  if (frozen_.empty()) return std::nullopt;
  PhaseTimer t(r_, "thaw");
  std::vector<Status> st(frozen_.size());
  parallel_for(
      frozen_.size(), [&](std::size_t i) { st[i] = engine::unpause_container(docker_, frozen_[i]); }, frozen_.size());
  frozen_.clear();
  for (const auto& s : st)
    if (!s) return classify_running(s.error().with_context("thawing the prepared sandbox"), InfraKind::kDaemon);
  return std::nullopt;
}

// The turn of a trial prepared ahead: its attempt and progress now known, the phases run
// ahead renamed, its start the turn's.
void TrialRun::claim(int attempt) {
  r_.attempt = attempt;
  r_.started_at = iso_now();
  for (const char* k : {"reserve", "up", "setup"})
    if (auto it = r_.phases.find(k); it != r_.phases.end()) {
      r_.phases[std::string("ahead_") + k] = it->second;
      r_.phases.erase(it);
    }
}

// A prepared trial never run: its tools closed, its stack handed to teardown.
void TrialRun::abandon() { down(); }

// The prepared trial owns what its TrialRun refers to: its environment and agent choice.
struct PreparedTrial::Impl {
  TrialEnv env;
  AgentChoice choice;
  std::unique_ptr<TrialRun> run;
  std::shared_ptr<std::function<void(const TrialProgress&)>> progress;  // set at the turn
};

PreparedTrial::PreparedTrial(std::unique_ptr<Impl> i) : impl(std::move(i)) {}

PreparedTrial::~PreparedTrial() {
  if (impl && impl->run) impl->run->abandon();
}

bool PreparedTrial::freeze() { return impl && impl->run && impl->run->freeze(); }
bool PreparedTrial::frozen() const { return impl && impl->run && impl->run->frozen(); }

Result<std::unique_ptr<PreparedTrial>> prepare_trial(const manifest::TaskConfig& task, int trial_index,
                                                     const AgentChoice& agent, const TrialEnv& env) {
  auto impl = std::make_unique<PreparedTrial::Impl>();
  impl->env = env;
  impl->env.up_priority = Slots::Priority::kAhead;
  // The live view's ear is the turn's: until then, progress goes nowhere.
  impl->progress = std::make_shared<std::function<void(const TrialProgress&)>>();
  impl->env.on_progress = [sink = impl->progress](const TrialProgress& p) {
    if (*sink) (*sink)(p);
  };
  impl->choice = agent;
  impl->run = std::make_unique<TrialRun>(task, trial_index, 0, impl->choice, impl->env);
  Step s = impl->run->begin();
  if (!s) s = impl->run->start_helper();
  if (s) {
    impl->run->abandon();
    impl->run.reset();
    return fail(s->interrupted ? Errc::kCancelled : Errc::kUnavailable, s->message);
  }
  return std::make_unique<PreparedTrial>(std::move(impl));
}

TrialResult finish_trial(std::unique_ptr<PreparedTrial> p, int attempt,
                         std::function<void(const TrialProgress&)> on_progress, std::unique_ptr<FirstTurn> first) {
  auto& impl = *p->impl;
  *impl.progress = std::move(on_progress);
  std::unique_ptr<TrialRun> run = std::move(impl.run);
  run->claim(attempt);
  run->adopt_first_turn(std::move(first));
  TrialResult r = run->finish(run->thaw());
  return r;
}

}  // namespace forge::trial
