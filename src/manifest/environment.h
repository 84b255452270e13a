// The environment manifest (docs/environment.md): a standalone YAML file or the `environment:`
// block of a task.yaml. Value types; parsed in environment_parse.cc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/compose.h"
#include "manifest/tools_config.h"

namespace forge::manifest {

enum class NetworkPolicy { kNoInternet, kLimitedInternet, kFullInternet };
const char* policy_name(NetworkPolicy p);  // "no_internet", …
std::optional<NetworkPolicy> policy_from_name(std::string_view name);

// The trial phases whose network may differ (`network_policy: {setup, agent, grade}`).
enum class Phase { kSetup, kAgent, kGrade };
const char* phase_name(Phase p);  // "setup", "agent", "grade"

// The sandbox's OCI runtime as written (`runtime:`, orchestrator.runtime, --runtime): "" and
// "auto" (and Tolokaforge's orchestrator.runtime "docker") mean the daemon's default.
bool is_auto_runtime(std::string_view requested);
// A name a daemon could list ([a-z0-9][a-z0-9._-]*, at most 64 characters): "" when valid, else why not.
std::string runtime_name_problem(std::string_view requested);

struct Resources {
  std::int64_t memory = 0;  // bytes; 0 = forgectl's default for the role
  double cpus = 0;          // 0 = default
  std::int64_t pids_limit = 0;
};

// Disk caps (MiB) a manifest may give: runner.disk_mb, runner.tmp_mb, services.<name>.disk_mb.
inline constexpr std::int64_t kMinDiskMb = 16;
inline constexpr std::int64_t kMaxDiskMb = 65536;

struct RunnerSpec {
  std::string image;    // empty: forgectl/runner:local
  // Built instead of pulled (a Harbor task's environment/Dockerfile or its `main` service's
  // build): the runner's image is then the content-tagged forgectl-task/runner:<hash>.
  std::optional<ComposeBuild> build;
  // "uid" | "uid:gid" ("root" is read as "0:0"); empty: the agent uid 1000:1000 in forgectl's
  // runner image, the image's own user in any other
  std::string user;
  std::string workdir;  // empty: /work (or the image's WORKDIR, below)
  // A Harbor task: an unset workdir is the image's WORKDIR (read by up once the image is there);
  // an image without one (or "/") keeps /work.
  bool workdir_from_image = false;
  Resources resources;
  std::vector<std::string> env_passthrough;  // host variables that may cross into the runner
  // "K=V" set in the runner, already resolved (a Harbor task's [environment].env); forgectl's own
  // variables (the egress proxy's) come after them and win.
  std::vector<std::string> env;
  std::int64_t disk_mb = 0;                  // the workspace's cap; 0: forgectl's default (2048)
  std::int64_t tmp_mb = 0;                   // /tmp's cap; 0: forgectl's default (512)
};

// Per-service isolation options (environment.services.<name>), tightening what the compose
// file says; forgectl's hardening defaults apply on top.
struct ServiceIsolation {
  std::optional<bool> read_only;
  Resources resources;
  std::vector<std::string> env_passthrough;
  std::int64_t disk_mb = 0;  // the writable layer's cap; 0: forgectl's default (2048)
  SourceLocation where;  // the service's key under environment.services, for messages
};

struct EnvironmentManifest {
  std::string path;  // the file it came from (absolute); for messages
  SourceLocation where;
  // The agent phase's policy (a plain string gives setup's too); setup_policy() and grade_policy
  // below say the other phases' (docs/environment.md "Per-phase policy").
  NetworkPolicy network_policy = NetworkPolicy::kNoInternet;
  std::optional<NetworkPolicy> setup_network_policy;  // unset: the agent's
  // The test-script grader's: no network unless the manifest's map says otherwise.
  NetworkPolicy grade_network_policy = NetworkPolicy::kNoInternet;
  // A Harbor multi-step task's steps' agent policies, in order, when any differs from the first
  // ([steps.agent] network_mode); the runner moves before each step. Empty otherwise.
  std::vector<NetworkPolicy> step_network_policies;
  // Their allowlists, in the same order (allowed_hosts of an allowlist step; empty for the others).
  std::vector<std::vector<std::string>> step_allowlists;
  // setup_script: a task file run in the runner as the agent's user during setup (absolute; empty: none).
  std::string setup_script;
  // setup_fork: false keeps every trial running setup_script itself; true (the default) runs it once
  // per run and forks each trial from a snapshot of its result (docs/sweeps.md "Forks").
  bool setup_fork = true;
  std::vector<std::string> allowlist;  // limited_internet_allowlist, as written
  bool allow_private = false;          // limited_internet_allow_private
  bool allow_plain_http = false;       // limited_internet_allow_http: GET/HEAD on port 80 too
  std::vector<int> connect_ports{443};  // limited_internet_ports
  std::string compose_file;             // absolute; empty: the built-in `stack`
  std::string stack = "core";           // core | full | none (runner only); used without compose_file
  RunnerSpec runner;
  std::map<std::string, ServiceIsolation> services;
  // `runtime`: the OCI runtime the runner runs under ("runsc"); empty: auto, the daemon's default.
  std::string runtime;
};

// The policy a phase runs under.
NetworkPolicy phase_policy(const EnvironmentManifest& m, Phase p);
// Whether the runner changes networks between phases (setup's policy is not the agent's, or a
// Harbor task's steps differ, in policy or in allowlist).
bool runner_changes_network(const EnvironmentManifest& m);
// Whether the runner is under `policy` in some phase (setup, agent, or a Harbor step).
bool runner_ever(const EnvironmentManifest& m, NetworkPolicy policy);

// What `forgectl up` and `validate` load from a path: a task directory, a task.yaml, or a
// standalone manifest, with its compose file (or built-in stack) already parsed.
struct LoadedEnvironment {
  std::string source;   // the file the manifest came from
  std::string task_id;  // empty for a standalone manifest
  std::string base_dir; // directory relative paths resolve against
  EnvironmentManifest manifest;
  ComposeFile compose;  // the task's compose file or the built-in stack
  ToolsConfig tools;    // the task's tools block; defaults for a standalone manifest
};

}  // namespace forge::manifest
