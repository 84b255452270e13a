// Planning a sweep.
#include "sweep/run_plan.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "core/limits.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "manifest/harbor/harbor_load.h"
#include "manifest/python_server.h"
#include "manifest/task_parse.h"
#include "policy/topology.h"
#include "stack/browser_image.h"
#include "stack/local_images.h"
#include "stack/up.h"
#include "sweep/task_set.h"
#include "sweep/trial_key.h"
#include "trial/browser_use.h"
#include "trial/local_trial.h"

namespace forge::sweep {

namespace fs = std::filesystem;

namespace {

// The images a task's stack runs: runner, services (not those built from a context: their
// content is the task's), and the egress proxy under limited_internet.
std::vector<std::pair<std::string, std::string>> stack_images(const manifest::TaskConfig& t) {
  const auto& env = t.environment;
  std::vector<std::pair<std::string, std::string>> out;  // {what, ref}
  if (trial::runs_locally(t)) {                          // no stack: at most the grader container of its test scripts
    const auto& cc = t.grading.custom_checks;
    std::string runner = env.manifest.runner.image.empty() ? policy::kDefaultRunnerImage : env.manifest.runner.image;
    if (trial::local_needs_engine(t)) out.emplace_back("grader", cc.image.empty() ? runner : cc.image);
    return out;
  }
  out.emplace_back("runner", env.manifest.runner.image.empty() ? policy::kDefaultRunnerImage : env.manifest.runner.image);
  for (const auto& s : env.compose.services)
    if (!s.build && !s.image.empty()) out.emplace_back("service '" + s.name + "'", s.image);
  if (manifest::runner_ever(env.manifest, manifest::NetworkPolicy::kLimitedInternet))
    out.emplace_back("egress proxy", stack::kDefaultProxyImage);
  // A closed network's resolver (or a Harbor verifier's allowlist network's) runs this binary's
  // services image; a network-free stack needs none, but its verifier network may.
  const bool has_services_image = std::any_of(out.begin(), out.end(), [](const auto& p) { return p.second == stack::kServicesImage; });
  const bool closed = env.manifest.network_policy != manifest::NetworkPolicy::kFullInternet ||
                      manifest::runner_changes_network(env.manifest);
  if (closed && (!policy::network_free(env) || t.harbor) && !has_services_image)
    out.emplace_back("resolver", stack::kServicesImage);
  // Grading's own containers: a task's checks.py runs in the Python image, and a missing one would
  // otherwise surface only after every agent phase, as a grading error per trial.
  if (t.grading.custom_checks.python()) out.emplace_back("checks.py", manifest::kPythonImage);
  if (trial::uses_browser(t)) out.emplace_back("browser", stack::kBrowserImage);
  return out;
}

// "oracle" → "oracle"; "llm:openai/gpt-4o" → "llm-openai-gpt-4o": a directory name.
std::string agent_slug(const std::string& label) {
  std::string s;
  for (char c : label) s += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ? c : '-';
  return s;
}

// What a container task's trial key takes from a runtime chosen by `auto` (the daemon's default):
// "runtime:<name>" unless it is runc, so keys made before runtimes were chosen stay valid. A forced
// runtime is in the agent fingerprint, a task's own named one in its content hash.
Result<std::string> auto_runtime_key(const PlanInput& o, const manifest::TaskConfig& t,
                                     std::optional<std::string>& asked) {
  if (trial::runs_locally(t) || !o.run->runtime.empty() || !o.default_runtime) return std::string();
  if (!manifest::is_auto_runtime(t.environment.manifest.runtime)) return std::string();
  if (!asked) {
    auto rt = o.default_runtime();
    if (!rt) return rt.fail();
    asked = *rt;
  }
  return asked->empty() || *asked == "runc" ? std::string() : "runtime:" + *asked;
}

}  // namespace

Result<std::unique_ptr<Plan>> make_plan(const PlanInput& o, const ImageResolver& resolve) {
  const manifest::RunConfig& run = *o.run;
  trial::PreflightInput pre{o.run, o.agents, o.llm, o.executor, true, o.allow_local};
  TaskSet set = load_task_set(o.task_paths, run.tasks_glob, pre);
  if (!set.ok()) return fail(Errc::kInvalid, set.report());
  auto plan = std::make_unique<Plan>();
  plan->warnings = set.warnings();
  plan->tasks = std::move(set.tasks);
  std::vector<trial::AgentChoice> canaries;
  if (o.canary)
    for (auto s : agent::kCanaryStrategies) canaries.push_back(trial::AgentChoice::canary_of(s));
  std::size_t planned = plan->tasks.size() * (o.agents.size() * static_cast<std::size_t>(std::max(o.trials, 0)) + canaries.size());
  if (planned > limits::kMaxPlannedTrials)
    return fail(Errc::kInvalid, std::to_string(plan->tasks.size()) + " task(s) × " + std::to_string(o.agents.size()) +
                                    " agent(s) × " + std::to_string(o.trials) + " trial(s)" +
                                    (canaries.empty() ? "" : " + " + std::to_string(canaries.size()) + " canaries per task") +
                                    " is " + std::to_string(planned) + " trials, more than the " +
                                    std::to_string(limits::kMaxPlannedTrials) + " one run may plan");
  if (o.agents.empty() && canaries.empty()) return fail(Errc::kInvalid, "no agent to run");
  std::set<std::string> labels;
  for (const auto& a : o.agents)
    if (!labels.insert(a.label()).second) return fail(Errc::kInvalid, "agent '" + a.label() + "' is given twice");

  std::optional<std::string> default_rt;  // asked once
  Sha256 config;  // over every trial key of the whole matrix: shards of one run agree on it
  for (const auto& t : plan->tasks) {
    auto hash = task_content_hash(t.dir);
    if (!hash) return hash.fail();
    std::vector<std::string> ids;
    for (const auto& [what, ref] : stack_images(t)) {
      if (!plan->facts.images.count(ref)) {
        auto img = resolve(ref);
        if (!img)
          return fail(Errc::kNotFound, "task " + t.task_id + ": " + what + " image " + ref + " is not on the engine (" +
                                           img.error().what() + "); build or load it: forgectl never pulls");
        plan->facts.images[ref] = *img;
      }
      ids.push_back(plan->facts.images[ref]);
    }
    if (auto rt = auto_runtime_key(o, t, default_rt); !rt) return rt.fail();
    else if (!rt->empty()) ids.push_back(*rt);
    if (trial::runs_locally(t)) {
      // Where the tools ran is part of what a trial is: a local result never stands for a container one.
      ids.push_back("executor:local");
      ++plan->local_tasks;
      plan->needs_engine = plan->needs_engine || trial::local_needs_engine(t);
    } else {
      plan->needs_engine = true;
      // A trial's stack that needs no network has none (policy::network_free): no subnet either.
      int nets = policy::network_free(t.environment) ? 0 : static_cast<int>(policy::network_prefixes(t.environment).size());
      // A Harbor verifier with a network of its own holds it while the trial's stack is still up.
      if (t.harbor)
        if (auto mode = manifest::verifier_network(*t.harbor).mode; mode != manifest::NetworkMode::kNoNetwork)
          nets += static_cast<int>(policy::network_keys(manifest::harbor_posture(mode)).size());
      plan->networks_per_trial = std::max(plan->networks_per_trial, nets);
    }
    for (const auto& a : o.agents) {
      std::string fp = agent_fingerprint(a, run, t);
      for (int i = 0; i < o.trials; ++i) {
        std::string key = trial_key(*hash, ids, fp, i);
        config.update(key);
        if (!in_shard(o.shard, t.task_id, a.label(), i)) continue;
        std::string rel = o.agents.size() > 1 ? t.task_id + "/" + agent_slug(a.label()) + "/" + std::to_string(i) : "";
        plan->jobs.push_back({&t, a, i, key, rel});
      }
    }
    // Always in a directory of their own: the agents' layout stays what it is without --canary.
    for (const auto& c : canaries) {
      std::string key = trial_key(*hash, ids, agent_fingerprint(c, run, t), 0);
      config.update(key);
      ++plan->canary_trials;
      if (in_shard(o.shard, t.task_id, c.label(), 0))
        plan->jobs.push_back({&t, c, 0, key, t.task_id + "/" + agent_slug(c.label()) + "/0"});
    }
  }
  plan->facts.config_hash = config.hex_digest().substr(0, 32);
  plan->agent_count = o.agents.size();
  plan->trials = o.trials;
  plan->shard = o.shard;
  return plan;
}

}  // namespace forge::sweep
