// The sealed Python container of grading: one definition for checks.py and golden replay.
#include "trial/python_container.h"

#include "core/strings.h"
#include "manifest/python_server.h"

namespace forge::trial {

engine::ContainerSpec python_container_spec(const PythonContainer& p) {
  engine::ContainerSpec spec;
  spec.name = p.labels.stack + "-" + p.name_part + "-" + random_hex(3);
  spec.image = manifest::kPythonImage;
  spec.cmd = std::vector<std::string>{"sleep", "2147483647"};  // the work runs as execs
  spec.user = p.user;
  spec.workdir = "/";
  spec.labels = p.labels.for_object(p.role);
  spec.host.network_mode = "none";
  spec.host.cap_drop = {"ALL"};
  spec.host.security_opt = {"no-new-privileges:true"};
  spec.host.pids_limit = 256;
  spec.host.memory = spec.host.memory_swap = p.memory;
  spec.host.init = true;
  return spec;
}

}  // namespace forge::trial
