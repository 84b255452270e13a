// A multi-step Harbor task's per-step parts (docs/harbor.md "Multi-step tasks"): a step's
// workdir/ into the workspace and its setup.sh before the step's agent, and the trial's reward map
// as the per-key mean over the steps.
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "engine/client.h"
#include "manifest/harbor/harbor_task.h"

namespace forge::trial {

// How long a step's setup.sh may run before the trial ends as the sandbox's infra error.
inline constexpr Millis kStepSetupTimeout{600000};

// steps/<name>/workdir/ but its top-level setup.sh, into `workspace` of `runner`, merged over what
// is there (Harbor uploads it into the working directory): every entry owned by uid:gid (the
// agent's, so it can change what it was given), directories 0755, files 0755 when executable and
// 0644 otherwise. Read through the task directory (no link leads out) within the loader's limits
// for a step's directories. What the agent left at one of those paths that is a link, or of the
// other kind (a file where a directory goes, a directory where a file goes), is removed first as
// uid:gid: nothing is written through a link, and the agent cannot make the copy fail. A step
// without workdir/ puts nothing.
Status put_harbor_step_workdir(engine::Client& c, const std::string& runner, const manifest::HarborTask& task,
                               const manifest::StepConfig& step, const std::string& workspace, unsigned uid,
                               unsigned gid);

// The step's setup.sh, run once in `workspace` of `runner` as uid:gid (the agent's: the author's
// code gets nothing the agent could not get itself, and never the verifier's identity) with bash
// (sh when the image has none), stdin /dev/null, under forgectl's helper and `timeout`. The script
// is a temporary file outside the workspace while it runs and removed after it. A script that
// exits non-zero or times out is kUnavailable naming the step, the exit code and the output's
// start (the trial's infra error of kind sandbox, never the model's); interrupted: kCancelled.
// The same for any setup script given as text (an environment's setup_script): `what` names it,
// `before` says what it ran ahead of ("before the step's agent"); `env` is added to the runner's
// (the setup phase's proxy variables: policy::StackPlan::setup_env).
Status run_setup_script(engine::Client& c, const std::string& runner, std::string script, const std::string& what,
                        const std::string& before, const std::string& workspace, unsigned uid, unsigned gid,
                        const std::atomic<int>* interrupted, Millis timeout, const std::vector<std::string>& env = {});
Status run_harbor_step_setup(engine::Client& c, const std::string& runner, const manifest::HarborTask& task,
                             const manifest::StepConfig& step, const std::string& workspace, unsigned uid,
                             unsigned gid, const std::atomic<int>* interrupted, Millis timeout = kStepSetupTimeout);

// Kills every process of `user` in `runner` (forgectl's helper --kill-all as that user): a step's
// agent of its own [steps.agent].user, after its agent phase, as the runner's user's are.
Status stop_user_processes(engine::Client& c, const std::string& runner, const std::string& user);

// Harbor's "mean" over the steps' reward maps: each key's mean across every map given (a step
// whose verifier gave no map — timed out, no or a spoiled reward file — is an empty map), a key a
// map lacks counting 0 there. Empty when no map holds a key.
std::map<std::string, double> mean_step_rewards(const std::vector<std::map<std::string, double>>& steps);

}  // namespace forge::trial
