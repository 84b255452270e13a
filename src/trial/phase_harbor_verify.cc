// A Harbor task's grade: its /logs and artifacts collected, its verifier run, its reward read.
#include "trial/trial_run.h"

#include "core/scope_guard.h"
#include "engine/tar.h"
#include "manifest/harbor/harbor_load.h"
#include "policy/topology.h"
#include "trial/harbor_artifacts.h"

namespace forge::trial {

using results::InfraKind;

namespace {

// Every entry of a tar under `prefix` ("steps/<name>/"): a step's logs beside the others'.
Result<std::string> under(const std::string& tar, const std::string& prefix) {
  auto entries = engine::read_tar(tar);
  if (!entries) return entries.fail();
  engine::TarWriter out;
  for (auto& e : *entries) {
    e.path = prefix + e.path;
    if (auto st = out.add_entry(e); !st) return st.fail();
  }
  return out.finish();
}

}  // namespace

Step TrialRun::grade_harbor() {
  HarborVerdict v;
  if (auto f = verify_harbor(v)) return f;
  r_.grade = std::move(v.grade);
  r_.verifier_exit_code = v.run.exit_code;
  r_.verifier_output = std::move(v.run.output);
  return std::nullopt;
}

// /logs/agent and /logs/artifacts from the runner, the artifacts, then the task's (or the
// step's) verifier: in a fresh container, or in the runner itself with --harbor-verifier shared
// (a step's tests removed again after it). A step's logs land under logs/steps/<name>/.
Step TrialRun::verify_harbor(HarborVerdict& verdict) {
  if (local_) return Fault::setup("a Harbor task runs in containers only, not on the local executor");
  auto logs = collect_harbor_logs(docker_, runner_);
  if (!logs) return classify_running(logs.error().with_context("collecting /logs"), InfraKind::kDaemon);
  const std::string prefix = step_ ? "steps/" + step_->name + "/" : "";
  std::vector<std::string> tars = std::move(*logs);
  const GraderSpec where = grader_spec();
  HarborVerifierOptions vo;
  std::size_t before = r_.log_tars.size();
  if (auto f = harbor_artifacts(vo)) return f;
  for (std::size_t i = before; i < r_.log_tars.size(); ++i) tars.push_back(std::move(r_.log_tars[i]));
  r_.log_tars.resize(before);
  if (auto f = harbor_verifier(where, vo)) return f;
  // A task (or step) that asks for a separate verifier ([verifier] environment_mode) keeps it.
  const auto& mode = step_ ? step_->verifier.mode : task_.harbor->verifier.mode;
  const bool shared = env_.run->harbor_shared_verifier && mode == manifest::VerifierMode::kShared;
  // The verifier's own network, when its mode asks for one (verifier_network.h); none in shared
  // mode. A grader made ahead comes in its own, brought up with it; run_harbor_verifier removes it.
  Result<std::optional<VerifierNetwork>> net = std::optional<VerifierNetwork>();
  std::optional<AheadGrader> ahead;
  if (!shared && !step_) ahead = take_grader_ahead();
  if (ahead) {
    net = std::move(ahead->network);
    vo.ahead = ahead->id;
  } else if (!shared) {
    net = up_verifier_network(docker_, *task_.harbor, manifest::verifier_network(*task_.harbor, step_),
                              verifier_network_options());
  }
  if (!net) return classify_running(net.error(), InfraKind::kDaemon);
  ScopeGuard drop_net([&] {
    if (!*net) return;
    if (auto why = remove_verifier_network(docker_, **net); !why.empty() && env_.log)
      env_.log->warn("trial " + r_.task_id + "/" + std::to_string(r_.trial_index) + ": the verifier's network: " + why);
  });
  if (*net) vo.network = &**net;
  auto v = shared ? run_harbor_shared_verifier(docker_, where, *task_.harbor, vo)
                  : run_harbor_verifier(docker_, where, *task_.harbor, vo);
  if (!v) {
    if (v.error().code == Errc::kInvalid) return Fault::setup(v.error().what());
    if (v.error().code == Errc::kCancelled) return Fault::interruption();
    return classify_running(v.error(), InfraKind::kGrader);
  }
  if (!v->verifier_logs.empty()) tars.push_back(std::move(v->verifier_logs));
  if (auto f = keep_logs(tars, prefix)) return f;
  verdict = std::move(*v);
  return std::nullopt;
}

// The trial's logs gain `tars`, each under `prefix` ("steps/<name>/", or "" for a task's own).
Step TrialRun::keep_logs(std::vector<std::string>& tars, const std::string& prefix) {
  for (auto& t : tars) {
    if (prefix.empty()) {
      r_.log_tars.push_back(std::move(t));
      continue;
    }
    auto moved = under(t, prefix);
    if (!moved) return classify_running(moved.error(), InfraKind::kHost);
    r_.log_tars.push_back(std::move(*moved));
  }
  return std::nullopt;
}

namespace {

// The containers a task's hooks and artifacts name: its services, and `main` for the runner —
// never forgectl's own proxy or resolver.
std::map<std::string, std::string> hook_containers(std::map<std::string, std::string> containers,
                                                   const std::string& runner) {
  containers["main"] = runner;
  for (const char* own : {policy::kRunnerKey, policy::kProxyKey, policy::kResolverKey}) containers.erase(own);
  return containers;
}

}  // namespace

// [[verifier.collect]] hooks, then the declared artifacts: into the trial's logs/artifacts/, and
// those outside the workspace into the verifier's fresh container, which otherwise holds only
// the workspace.
Step TrialRun::harbor_artifacts(HarborVerifierOptions& vo) {
  std::map<std::string, std::string> containers = hook_containers(up_->containers, runner_);
  const std::string who = "trial " + r_.task_id + "/" + std::to_string(r_.trial_index);
  if (!task_.harbor->verifier.collect.empty()) {
    auto notes = run_collect_hooks(docker_, containers, task_.harbor->verifier.collect, env_.interrupted);
    if (!notes && notes.error().code == Errc::kCancelled) return Fault::interruption();
    if (!notes) return classify_running(notes.error(), InfraKind::kDaemon);
    if (env_.log)
      for (const auto& n : *notes) env_.log->warn(who + ": " + n);
  }
  if (task_.harbor->artifacts.empty()) return std::nullopt;
  auto arts = collect_harbor_artifacts(docker_, containers, task_.harbor->artifacts, workspace());
  if (!arts) return classify_running(arts.error(), InfraKind::kDaemon);
  if (env_.log)
    for (const auto& n : arts->notes) env_.log->warn(who + ": artifacts: " + n);
  if (!arts->trial_tar.empty()) r_.log_tars.push_back(std::move(arts->trial_tar));
  if (!arts->verifier_tar.empty()) vo.artifact_tars.push_back(std::move(arts->verifier_tar));
  return std::nullopt;
}

// Who the tests run as ([verifier].user, or the step's, refused when unsafe: a setup error) and
// their env (harbor_verifier_env): the verifier's environment ([verifier.environment].env, else
// [environment].env), then [verifier].env (a step's tables: their own, else the task's).
Step TrialRun::harbor_verifier(const GraderSpec& where, HarborVerifierOptions& vo) {
  auto as = harbor_verifier_identity(docker_, where, *task_.harbor, step_);
  if (!as)
    return as.error().code == Errc::kInvalid ? Fault::setup(as.error().what())
                                             : classify_running(as.error(), InfraKind::kGrader);
  vo.as = *as;
  vo.step = step_;
  vo.env = harbor_verifier_env(harbor_env_, step_ ? std::optional<std::size_t>(step_index_) : std::nullopt);
  return std::nullopt;
}

// A step's own `artifacts`, after its verification: into logs/steps/<name>/artifacts/ beside
// the task's, never into a verifier (the step's has run).
Step TrialRun::step_artifacts() {
  if (step_->artifacts.empty()) return std::nullopt;
  std::map<std::string, std::string> containers = hook_containers(up_->containers, runner_);
  auto arts = collect_harbor_artifacts(docker_, containers, step_->artifacts, workspace());
  if (!arts) return classify_running(arts.error(), InfraKind::kDaemon);
  if (env_.log)
    for (const auto& n : arts->notes)
      env_.log->warn("trial " + r_.task_id + "/" + std::to_string(r_.trial_index) + ": step " + step_->name +
                     ": artifacts: " + n);
  if (arts->trial_tar.empty()) return std::nullopt;
  auto moved = under(arts->trial_tar, "steps/" + step_->name + "/");
  if (!moved) return classify_running(moved.error(), InfraKind::kHost);
  r_.log_tars.push_back(std::move(*moved));
  return std::nullopt;
}

// The separate verifier of a task without steps made ahead (grader_ahead.h), in its own network
// when its mode asks for one: with the identity, env and limits the grade phase will give it.
void TrialRun::prepare_harbor_ahead() {
  const auto& h = *task_.harbor;
  if (!h.steps.empty() || (env_.run->harbor_shared_verifier && h.verifier.mode == manifest::VerifierMode::kShared))
    return;
  grader_ahead_.start([this, where = grader_spec()]() -> Result<AheadGrader> {
    HarborVerifierOptions vo;
    if (auto f = harbor_verifier(where, vo)) return fail(Errc::kInvalid, f->message);
    auto net = up_verifier_network(docker_, *task_.harbor, manifest::verifier_network(*task_.harbor, nullptr),
                                   verifier_network_options());
    if (!net) return net.fail();
    AheadGrader g;
    g.network = std::move(*net);
    if (g.network) vo.network = &*g.network;
    auto id = prepare_harbor_verifier(docker_, where, *task_.harbor, vo);
    if (!id) {
      if (g.network) (void)remove_verifier_network(docker_, *g.network);
      return id.fail();
    }
    g.id = *id;
    return g;
  });
}

// The verifier's network stack: the trial's run, lease and interruption, the task's image as its
// (idle) runner, so nothing beyond what the trial already has must be on the daemon.
VerifierNetworkOptions TrialRun::verifier_network_options() const {
  VerifierNetworkOptions o;
  o.up.host = env_.host;
  o.up.engine_info = env_.engine_info;
  o.up.mode = stack::OwnerMode::kAttached;
  o.up.run_id = env_.run_id;
  o.up.interrupted = env_.interrupted;
  o.up.lease = std::chrono::duration_cast<std::chrono::seconds>(env_.run->episode_timeout) + std::chrono::hours(1);
  o.up.omit_unused_network = true;
  o.up.runner_image = up_->plan.runner.image;
  // A Harbor task cannot set it; a test whose "internet" is on a private subnet does, for both phases.
  o.allow_private = task_.environment.manifest.allow_private;
  return o;
}

}  // namespace forge::trial
