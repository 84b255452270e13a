// Killing what the agent left running.
#include "stack/quiesce.h"

#include "engine/exec.h"
#include "policy/topology.h"

namespace forge::stack {

Status stop_agent_processes(engine::Client& c, const UpResult& up) {
  auto it = up.containers.find(policy::kRunnerKey);
  if (it == up.containers.end()) return {};
  engine::ExecOptions o;
  // As the container's own user (empty: the user it runs as), which every tool call used.
  o.cmd = {std::string(policy::kHelperDir) + "/exec", "--kill-all"};
  o.timeout = Millis(20000);
  auto r = engine::exec_run(c, it->second, o);
  if (!r) return r.fail_with("stopping the agent's processes");
  if (r->exit_code != 0)
    return fail(Errc::kProtocol, "stopping the agent's processes: the helper exited " + std::to_string(r->exit_code) +
                                     (r->err.empty() ? "" : ": " + r->err.substr(0, 200)));
  return {};
}

}  // namespace forge::stack
