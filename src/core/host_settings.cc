// HostSettings from environment variables.
#include "core/host_settings.h"

#include <unistd.h>

#include <cstdlib>

namespace forge {

EnvLookup process_env() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

EnvLookup no_env() {
  return [](const char*) -> std::optional<std::string> { return std::nullopt; };
}

HostSettings HostSettings::from(const EnvLookup& env) {
  HostSettings s;
  auto set = [&](const char* name, std::string& field) {
    if (auto v = env(name); v && !v->empty()) field = *v;
  };
  s.state_dir = ::geteuid() == 0 ? "/run/forgectl" : "/tmp/forgectl-" + std::to_string(::geteuid());
  set("FORGECTL_STATE_DIR", s.state_dir);
  set("FORGECTL_SUBNET_POOL", s.subnet_pool);
  set("FORGECTL_PROXY_IMAGE", s.proxy_image);
  set("FORGECTL_EXEC_HELPER", s.exec_helper);
  set("FORGECTL_LOG", s.log_level);
  set("FORGECTL_DEBIAN_MIRROR", s.debian_mirror);
  set("DOCKER_CONTEXT", s.docker_context);
  set("HOME", s.home);
  set("SLURM_ARRAY_TASK_ID", s.slurm.array_task_id);
  set("SLURM_ARRAY_TASK_COUNT", s.slurm.array_task_count);
  set("SLURM_ARRAY_TASK_MIN", s.slurm.array_task_min);
  set("SLURM_ARRAY_TASK_MAX", s.slurm.array_task_max);
  set("SLURM_ARRAY_JOB_ID", s.slurm.array_job_id);
  set("SLURMD_NODENAME", s.slurm.node);
  if (auto v = env("FORGECTL_HOST_FIREWALL"); v && *v == "off") s.host_firewall = false;
  if (auto v = env("FORGECTL_REQUIRE_CONTAINER"); v && *v == "1") s.require_container = true;
  s.env = env;
  return s;
}

}  // namespace forge
