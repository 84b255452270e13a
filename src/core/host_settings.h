// The host's settings, read from the environment once, in main(), and passed down: no layer
// below the CLI calls getenv (tests set a field instead of the process environment).
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace forge {

// A view of environment variables; tests supply a map.
using EnvLookup = std::function<std::optional<std::string>(const char*)>;
EnvLookup process_env();
EnvLookup no_env();

struct HostSettings {
  std::string state_dir;                    // FORGECTL_STATE_DIR; default /run/forgectl (root), else /tmp/forgectl-<uid>
  std::string subnet_pool = "10.231.0.0/16";  // FORGECTL_SUBNET_POOL: where stack subnets come from
  std::string proxy_image;                  // FORGECTL_PROXY_IMAGE; empty: forgectl/squid:local
  std::string exec_helper;                  // FORGECTL_EXEC_HELPER; empty: beside the forgectl binary
  bool host_firewall = true;                // FORGECTL_HOST_FIREWALL=off turns the INPUT rules off
  bool require_container = false;           // FORGECTL_REQUIRE_CONTAINER=1: no host shell, ever
  std::string log_level;                    // FORGECTL_LOG (debug|info|warn|error); empty: info
  std::string services_image;               // the built-in services' image; empty: this binary's own
                                            // (forgectl/services:<digest>, stack/local_images.h)
  std::string debian_mirror;                // FORGECTL_DEBIAN_MIRROR; empty: the host's apt sources
  // Where the daemon is when neither -H nor DOCKER_HOST says (engine::docker_host_from_env reads
  // the same variables through `env`): the docker CLI's context, and the home its files are under.
  std::string docker_context;  // DOCKER_CONTEXT; empty: ~/.docker/config.json's currentContext
  std::string home;            // HOME
  // Slurm's variables in a job (`run --shard auto`, docs/scale.md); empty outside one.
  struct Slurm {
    std::string array_task_id, array_task_count, array_task_min, array_task_max;  // SLURM_ARRAY_TASK_*
    std::string array_job_id;                                                     // SLURM_ARRAY_JOB_ID
    std::string node;                                                             // SLURMD_NODENAME
  } slurm;
  // The variables a task names (env_passthrough) and API keys are looked up here, and only here.
  EnvLookup env = no_env();

  static HostSettings from(const EnvLookup& env);
  // The defaults with no environment at all (tests, benches).
  static HostSettings defaults() { return from(no_env()); }
};

}  // namespace forge
