// The parts of a trial peculiar to a Harbor or Terminal-Bench 1 task (docs/task.md, "Harbor
// tasks"): /logs in the runner, the oracle's /solution, and the verifier in a fresh container with
// the score read from /logs/verifier/reward.txt or reward.json (TB1: pytest's output).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/host_settings.h"
#include "core/result.h"
#include "engine/client.h"
#include "grading/evidence.h"
#include "manifest/harbor/harbor_task.h"
#include "trial/grading_sources.h"
#include "trial/verifier_run.h"

namespace forge::trial {

// The uid and gid the runner's processes run as (its user, else its image's USER; or `user`, an
// exec user such as a step's [steps.agent].user), as `id` says.
struct AgentIds {
  unsigned uid = 0, gid = 0;
};
Result<AgentIds> runner_ids(engine::Client& c, const std::string& runner, const std::string& user = "");

// /logs (root, 0755) with /logs/agent and /logs/artifacts owned by the agent's uid, in the
// runner before the agent starts: Harbor's agents and tasks write there.
Status put_harbor_logs(engine::Client& c, const std::string& runner, unsigned uid, unsigned gid);

// A Harbor task's env tables as "K=V": each "${VAR}" / "${VAR:-fallback}" template reads the host
// only when the run passes VAR (forgectl run --env-passthrough VAR), else takes its fallback, else
// is kInvalid naming the entry and the flag. Literal values as written.
struct HarborEnv {
  std::vector<std::string> environment;  // [environment].env: the runner's, and a verifier's without its own table
  std::vector<std::string> verifier;     // [verifier].env: the tests', over the environment's
  std::vector<std::string> solution;     // [solution].env: the oracle's solve.sh
  std::vector<std::vector<std::string>> steps;  // each [[steps]] entry's [steps.verifier].env, in order
  // [verifier.environment].env when the task has that table (Harbor: the separate verifier's
  // environment is that table, not a copy of [environment]), and each step's, in order.
  std::optional<std::vector<std::string>> verifier_environment;
  std::vector<std::optional<std::vector<std::string>>> steps_environment;
};
Result<HarborEnv> resolve_harbor_env(const manifest::HarborTask& task, const std::vector<std::string>& passthrough,
                                     const EnvLookup& host);

// The tests' env, in Harbor's order (docs/harbor.md "Env values"): the verifier's environment —
// [verifier.environment].env when the table is given, else [environment].env — then
// [verifier].env over it (a step's: `step` indexes both of its tables). A name given twice keeps
// its later value, in the place it first had.
std::vector<std::string> harbor_verifier_env(const HarborEnv& env, std::optional<std::size_t> step = std::nullopt);

// Where the oracle's command finds [solution].env: a file of `K='v'` lines it sources first
// (harbor_load.cc's oracle command), so no value appears in the tool call or its log.
inline constexpr const char* kSolutionEnvFile = "/solution/.forgectl-env";

// The task's solution/ (TB1: solution.sh alone) at /solution in the runner, owned by the agent's
// uid: only for the oracle, only when its agent phase starts; with `env` ([solution].env,
// resolved) in kSolutionEnvFile when not empty.
Status put_harbor_solution(engine::Client& c, const std::string& runner, const manifest::HarborTask& task, unsigned uid,
                           unsigned gid, const std::vector<std::string>& env = {});

// A multi-step task's step `step` for the oracle: what the previous step left in /solution is
// emptied (as `owner`, who owns it: the previous step's agent; null: uid:gid), then
// steps/<name>/solution/ goes there owned by uid:gid, with `env` as put_harbor_solution's. A step
// without a solution leaves /solution empty.
Status put_harbor_step_solution(engine::Client& c, const std::string& runner, const manifest::HarborTask& task,
                                const manifest::StepConfig& step, unsigned uid, unsigned gid,
                                const std::vector<std::string>& env = {}, const AgentIds* owner = nullptr);

// /logs/agent and /logs/artifacts of the runner after the agent phase, as tars named
// "agent/…" and "artifacts/…" (missing directories give no tar).
Result<std::vector<std::string>> collect_harbor_logs(engine::Client& c, const std::string& runner);

// reward.json: an object of names to numbers (booleans as 0/1), at most 256 keys; anything else
// is kProtocol naming what is wrong, except a number outside [0, 1], which is kInvalid (the
// task's error: Harbor would take it, forgectl does not).
Result<std::map<std::string, double>> parse_reward_json(std::string_view text);

// The score Harbor takes from a reward map: its "reward" key, else its only key; with several
// keys and no "reward" it is kInvalid (Harbor's mean metric refuses such a map too).
Result<double> harbor_score(const std::map<std::string, double>& rewards);

struct HarborVerdict {
  grading::Grade grade;  // score, binary_pass (score ≥ 1), components "reward.<key>", reasons
  // The reward map the tests wrote: reward.txt's value as "reward", or reward.json's keys (TB1:
  // pytest's "reward"). Empty when there is none: timed out, killed, no or a spoiled reward file.
  std::map<std::string, double> rewards;
  grading::TestRun run;       // the verifier's exit and output
  std::string verifier_logs;  // /logs/verifier as a tar ("verifier/…"); may be empty
};

// Who the tests run as: [verifier].user when given — a uid, "uid:gid", or a name looked up in the
// image's /etc/passwd (a container of the image, created and removed unstarted: the agent never
// touched it) — else forgectl's verifier, 2000:2000. Refused (kInvalid): root, and the agent's
// uid or gid 1000 (check_verifier_ids).
Result<VerifierIdentity> harbor_verifier_identity(engine::Client& c, const GraderSpec& where,
                                                  const manifest::HarborTask& task,
                                                  const manifest::StepConfig* step = nullptr);

// kInvalid unless uid and gid are neither root's nor the agent's (1000, which owns the workspace
// copy and runs the programs behind $FORGECTL_AS_AGENT in the grader): with the agent's ids,
// whatever the agent left would act as the verifier and could write the reward; root is what
// forgectl's helper never runs anything as. `what` names the setting.
Status check_verifier_ids(unsigned uid, unsigned gid, const std::string& what);

struct HarborVerifierOptions {
  const struct VerifierNetwork* network = nullptr;  // verifier_network.h; null: no network at all
  VerifierIdentity as;                              // harbor_verifier_identity
  // The tests' env, resolved: harbor_verifier_env.
  std::vector<std::string> env;
  // The declared artifacts outside the workspace (harbor_artifacts.h), the agent's, put in first.
  std::vector<std::string> artifact_tars;
  // A step of a multi-step task: its tests/ over the task's, its test.sh and its [verifier]
  // timeout (the env is the caller's, in `env`). Null: the task's own.
  const manifest::StepConfig* step = nullptr;
  // The separate verifier's grader made ahead for this trial with the same options but no
  // artifacts (prepare_harbor_verifier); empty: one is made now.
  std::string ahead;
};

// The separate verifier's container limits: [verifier.environment]'s cpus and memory_mb (a step's
// table, else the task's); what it leaves unset is forgectl's grader default (2 GiB, no CPU cap).
struct VerifierLimits {
  std::int64_t cpus = 0, memory_mb = 0;  // 0: the default
};
VerifierLimits harbor_verifier_limits(const manifest::HarborTask& task, const manifest::StepConfig* step = nullptr);

// Runs the task's tests in a fresh grader container of the runner's image (Harbor's "separate"
// verifier): the workspace copied as the agent's, tests/ at /tests as the verifier (`o.as`), the
// [verifier] timeout, the network `o.network` (none without), [verifier.environment]'s limits
// (harbor_verifier_limits; an OOM-killed verifier scores 0 naming the limit), and the reward read
// after every process is dead.
Result<HarborVerdict> run_harbor_verifier(engine::Client& c, const GraderSpec& where, const manifest::HarborTask& task,
                                          const HarborVerifierOptions& o = {});

// The separate verifier's grader made ahead of the trial's grade phase (grader_ahead.h): created
// in `o.network` with [verifier.environment]'s limits, the tests and /logs in it, started, its
// as-agent service up; nothing of the agent's. `o` without artifacts (they are collected after the
// agent): a run whose artifacts must go in makes a fresh grader instead.
Result<std::string> prepare_harbor_verifier(engine::Client& c, const GraderSpec& where,
                                            const manifest::HarborTask& task, const HarborVerifierOptions& o);

// Harbor's "shared" verifier (forgectl run --harbor-verifier shared): the tests run in the agent's
// own runner `where.runner`, after its processes were killed — /logs/verifier and tests/ at
// /tests (owned by the verifier, `o.as`) put in only now, test.sh run as the verifier under the
// helper's deadline in the workspace, every process of the verifier killed, then the reward read.
// A /tests or /logs/verifier the agent left is no verdict: reward 0. `o.network` and
// `o.artifact_tars` do not apply (the runner keeps the agent's network and files).
Result<HarborVerdict> run_harbor_shared_verifier(engine::Client& c, const GraderSpec& where,
                                                 const manifest::HarborTask& task, const HarborVerifierOptions& o = {});

}  // namespace forge::trial
