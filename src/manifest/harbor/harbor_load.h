// A Harbor or Terminal-Bench 1 task as the sweep sees every task: a TaskConfig whose `harbor`
// holds the HarborTask, with the agent's stack (runner = the task's main image, its other compose
// services, the agent phase's network posture) already described (docs/harbor.md "Running a task").
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "manifest/environment.h"
#include "manifest/harbor/harbor_task.h"
#include "manifest/task_config.h"

namespace forge::manifest {

// Harbor's network mode as forgectl's posture: public → full_internet, no-network → no_internet,
// allowlist → limited_internet (allowed_hosts its allowlist).
NetworkPolicy harbor_posture(NetworkMode m);

// The network of the agent's phase (of `step`, when given): its override, else the baseline.
const HarborNetwork& agent_network(const HarborTask& t, const StepConfig* step = nullptr);

// The network of the verification phase (of `step`, when given): [verifier]'s override, else a
// separate verifier's [verifier.environment] network when it sets one, else the baseline
// [environment]'s (docs/harbor.md "The verifier's network").
const HarborNetwork& verifier_network(const HarborTask& t, const StepConfig* step = nullptr);

// Whether `forgectl run --harbor-verifier shared` changes how `t` is judged: its [verifier] (or a
// step's [steps.verifier]) does not ask for a separate verifier.
bool shared_verifier_applies(const HarborTask& t);

// The built-in tools a Harbor task's agent gets: a shell and the file tools, in the workspace.
const std::vector<std::string>& harbor_agent_tools();

// The system prompt of a Harbor task's LLM agent (Harbor has none: each harness brings its own).
std::string harbor_system_prompt(const std::string& workdir);

// Loads the Harbor (task.toml) or Terminal-Bench 1 (task.yaml with `instruction`) task at `path`
// (its directory or that file) and describes it as a TaskConfig: task_id = the directory's name,
// the instruction as the initial user message, no user simulator, the agent phase's network,
// resources (cpus, memory_mb, storage_mb as the workspace's disk cap), workdir and user on the
// runner. The runner's image is [environment].docker_image, `main`'s `image:`, or empty: the
// trial builds it (environment/Dockerfile or `main`'s build). Errors are the loaders' (kInvalid
// with one "file:line:col: …" line per problem); warnings stay in harbor->warnings.
Result<TaskConfig> load_harbor_task_config(const std::string& path);

// One env table's "K=V" entries, each template `${VAR}` / `${VAR:-fallback}` resolved: from the
// host (`lookup`) when `allowed` passes VAR and the host sets it, else the fallback, else an
// error naming the entry and the variable (kInvalid: the same on every trial).
Result<std::vector<std::string>> resolve_env(const std::vector<EnvEntry>& entries,
                                             const std::function<bool(const std::string&)>& allowed,
                                             const std::function<std::optional<std::string>(const std::string&)>& lookup);

}  // namespace forge::manifest
