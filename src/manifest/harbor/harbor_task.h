// A Harbor or Terminal-Bench task as forgectl reads it (docs/harbor.md): plain values, filled by
// harbor_parse.cc (task.toml, Harbor's schema 1.0–1.4) and tb1_parse.cc (Terminal-Bench 1's task.yaml).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/compose.h"
#include "manifest/diagnostics.h"
#include "manifest/tools_config.h"

namespace forge::manifest {

// Harbor's task.toml (Terminal-Bench 2.x and every Harbor dataset), or Terminal-Bench 1's task.yaml.
enum class HarborFormat { kHarbor, kTerminalBench1 };

// public: the internet; no-network: nothing outside the task's own services; allowlist: only
// `allowed_hosts`.
enum class NetworkMode { kPublic, kNoNetwork, kAllowlist };
const char* to_string(NetworkMode m);  // Harbor's spelling: "public", "no-network", "allowlist"

struct HarborNetwork {
  NetworkMode mode = NetworkMode::kPublic;
  // kAllowlist only, in Harbor's normal form: lower-case host names, "*.suffix" wildcards, IPv4/IPv6
  // addresses and CIDR ranges, without trailing dots or duplicates. Empty: nothing is reachable.
  std::vector<std::string> allowed_hosts;
};

// One entry of an env table ([environment].env, [verifier].env, [solution].env). Harbor resolves a
// value that is exactly "${VAR}" or "${VAR:-fallback}" from the host when a trial starts; any other
// value is literal. forgectl keeps templates unresolved: only the caller that runs the trial may
// read the host (and only names it was allowed to pass through).
struct EnvEntry {
  std::string name;
  std::string value;                    // as written
  std::string host_var;                 // the host variable a template reads; empty for a literal
  std::optional<std::string> fallback;  // "${VAR:-fallback}"
  SourceLocation where;
  bool is_template() const { return !host_var.empty(); }
};

// [environment.healthcheck] / [steps.healthcheck]: `command` run in the main container until it
// passes, before the agent starts. Harbor's defaults.
struct HealthcheckConfig {
  std::string command;  // a shell command; exit status 0 = healthy
  double interval_sec = 5, timeout_sec = 30, start_period_sec = 0, start_interval_sec = 5;
  int retries = 3;
};

// [[environment.mcp_servers]]: a server the agent may use.
struct McpServer {
  std::string name;
  McpTransport transport = McpTransport::kStdio;
  std::string command;  // stdio: run in the main container
  std::vector<std::string> args;
  std::string url;  // sse / streamable-http: a service of environment/docker-compose.yaml
  SourceLocation url_where;
  std::string service;  // the compose service the url's host names, once the compose file is read
};

// [environment], and a separate verifier's [verifier.environment].
struct EnvironmentConfig {
  double build_timeout_sec = 600;
  std::string docker_image;  // a prebuilt image instead of environment/Dockerfile; "" = build it
  // Unset: the provider's default (newer Harbor injects none); `cpu` is older files' spelling.
  std::optional<std::int64_t> cpus, memory_mb, storage_mb;
  std::int64_t gpus = 0;  // always 0: more is refused
  HarborNetwork network;  // the baseline every phase starts from (allow_internet folded in)
  bool network_set = false;  // the table gave network_mode, allowed_hosts or allow_internet
  std::vector<EnvEntry> env;
  std::vector<McpServer> mcp_servers;
  std::optional<HealthcheckConfig> healthcheck;
  std::string workdir;  // absolute; "" = the image's WORKDIR
};

// [agent] (and a step's [steps.agent], resolved against it).
struct AgentConfig {
  std::optional<double> timeout_sec;     // unset: no limit from the task (the run's own applies)
  std::string user;                      // name or uid; "" = the image's USER
  std::optional<HarborNetwork> network;  // during the agent's run only; unset = the baseline
};

// Where the verifier runs: in the agent's environment after the agent (shared, Harbor's default),
// or in a fresh container of the task's environment that receives only the artifacts (separate).
enum class VerifierMode { kShared, kSeparate };

// [[verifier.collect]]: a command run in a service after the agent, before artifacts are collected.
struct CollectHook {
  std::string command;
  std::string service = "main";
  double timeout_sec = 60;
  std::string user;
  SourceLocation where;
};

// [verifier] (and a step's [steps.verifier], resolved against it).
struct VerifierConfig {
  double timeout_sec = 600;
  std::vector<EnvEntry> env;
  std::string user;                      // "" = the image's USER (usually root)
  std::optional<HarborNetwork> network;  // during verification only; unset = the baseline
  VerifierMode mode = VerifierMode::kShared;
  // Separate mode's own settings ([verifier.environment]: resources, network, env); unset = a
  // fresh copy of [environment]. Its own image is refused, so the image is always the task's.
  std::optional<EnvironmentConfig> environment;
  std::vector<CollectHook> collect;
};

// One `artifacts` entry: a path copied out of the sandbox after the agent (and, in separate mode,
// into the verifier's container).
struct Artifact {
  std::string source;       // a path in the container ("/app/out.json"); no ".." components
  std::string destination;  // relative to the trial's artifact directory; "" = derived from source
  std::vector<std::string> exclude;
  std::string service;  // "" or "main" = the main container
  SourceLocation where;
};

// The paths the verifier's container keeps for forgectl and the tests: the reward directory, the
// tests, the as-agent socket's directory, the helper's mount and the verifier's HOME. An artifact
// placed into the verifier must neither be one, hold one, nor lie inside one (trial/grader_setup.h
// names the same paths; a unit test keeps the two lists together).
inline constexpr const char* kVerifierReservedPaths[] = {"/logs/verifier", "/tests", "/tmp/forgectl-as-agent",
                                                         "/.forgectl", "/forgectl-verifier-home"};

// `p` without empty or "." components and without a trailing '/': "//a/./b/" is "/a/b", "./x"
// is "x", "/" stays "/" and a relative path naming nothing is "". nullopt when a component is "..".
std::optional<std::string> normal_path(std::string_view p);

// The reserved path (above) that the absolute, normal path `p` equals, holds or lies inside;
// "" when none.
std::string reserved_verifier_path(std::string_view p);

// One [[steps]] entry with its steps/<name>/ files. Unset agent/verifier values are the task's.
struct StepConfig {
  std::string name;
  SourceLocation where;
  AgentConfig agent;
  VerifierConfig verifier;
  // Abort the remaining steps when this step's rewards fall short: `min_reward` gates the
  // "reward" key, `min_rewards` each named key (a missing key counts as -infinity).
  std::optional<double> min_reward;
  std::map<std::string, double> min_rewards;
  std::optional<HealthcheckConfig> healthcheck;  // after the step's setup, before its agent
  std::vector<Artifact> artifacts;               // after this step's verification, with the task's
  std::string instruction;                       // steps/<name>/instruction.md
  std::string tests_dir;        // steps/<name>/tests (absolute), copied over the task's tests/; "" = none
  std::string test_script;      // the test.sh the step runs: its own, else the task's tests/test.sh
  std::string workdir_dir;      // steps/<name>/workdir (absolute), uploaded to the workdir first; "" = none
  std::string setup_script;     // steps/<name>/workdir/setup.sh, run before the step's agent; "" = none
  std::string solution_script;  // steps/<name>/solution/solve.sh for the oracle; "" = none
};

enum class RewardStrategy { kMean, kFinal };

// How the verifier's result becomes a reward: Harbor's /logs/verifier/reward.txt or reward.json,
// or Terminal-Bench 1's pytest output (parse_pytest_output).
enum class RewardSource { kRewardFile, kPytestOutput };

struct Author {
  std::string name, email;
};

// The task directory's files, absolute paths; "" where absent.
struct HarborFiles {
  std::string environment_dir;  // the build context (TB1: the task directory itself)
  std::string dockerfile;       // environment/Dockerfile (TB1: Dockerfile)
  std::string compose_file;     // environment/docker-compose.yaml (TB1: docker-compose.yaml)
  std::string tests_dir;        // tests/, copied to /tests only after the agent
  std::string test_script;      // tests/test.sh (TB1: run-tests.sh, copied beside tests/ into /tests)
  std::string solution_dir;     // solution/ (TB1: the task directory's solution.sh alone)
  std::string solution_script;  // solution/solve.sh (TB1: solution.sh)
};

// Terminal-Bench 1 settings with no Harbor counterpart.
struct Tb1Settings {
  std::string parser_name = "pytest";  // the only parser accepted
  std::optional<double> estimated_duration_sec;
  std::optional<std::int64_t> expert_time_estimate_min, junior_time_estimate_min;
};

struct HarborTask {
  HarborFormat format = HarborFormat::kHarbor;
  std::string dir;             // absolute
  std::string id;              // the directory's name, which Harbor and Terminal-Bench use as the task id
  std::string config_path;     // task.toml / task.yaml, absolute
  std::string schema_version;  // "1.0".."1.4"; TB1: ""

  // [task] (schema 1.1+) and [metadata]; TB1's author_*, difficulty, category, tags.
  std::string name;  // "org/name"; "" when the file has no [task]
  std::string version, description, source;
  std::vector<Author> authors;
  std::vector<std::string> keywords;
  std::string metadata_json = "{}";  // [metadata] as written, as JSON: free-form, stored for reports
  std::string difficulty, category;  // copied out of the metadata where they are strings
  std::vector<std::string> tags;

  std::string instruction;  // instruction.md (TB1: task.yaml's instruction); "" for a multi-step task
  AgentConfig agent;
  VerifierConfig verifier;
  EnvironmentConfig environment;
  std::vector<EnvEntry> solution_env;  // [solution].env, for the oracle's solve.sh
  std::vector<Artifact> artifacts;
  std::vector<StepConfig> steps;  // empty for a single-step task
  RewardStrategy reward_strategy = RewardStrategy::kMean;
  RewardSource reward_source = RewardSource::kRewardFile;

  HarborFiles files;
  std::optional<ComposeFile> compose;  // environment/docker-compose.yaml, read as forgectl's compose subset
  std::string main_service;            // the agent's service: "main" (TB1: "client")
  std::optional<Tb1Settings> tb1;

  // Keys accepted without effect, and other notes a user should see (severity kWarning).
  std::vector<Diagnostic> warnings;
};

// forgectl's limits on a task's files (Harbor has none); the directory trees' are in task_dir.h.
inline constexpr std::size_t kMaxConfigBytes = 1 << 20;       // task.toml, task.yaml, compose files
inline constexpr std::size_t kMaxInstructionBytes = 1 << 20;  // instruction.md
inline constexpr std::size_t kMaxScriptBytes = 4 << 20;       // test.sh, solve.sh, setup.sh, run-tests.sh

}  // namespace forge::manifest
