// After the agent: how its episode ended, and nothing it started left running into grading.
#include "trial/trial_run.h"

#include <algorithm>
#include <iterator>
#include <string_view>

#include "policy/topology.h"
#include "stack/quiesce.h"
#include "trial/harbor_steps.h"

namespace forge::trial {

using results::InfraKind;

namespace {

bool is_file_tool(std::string_view name) {
  static constexpr std::string_view kFileTools[] = {"read_file",    "write_file", "append_file", "list_dir",
                                                    "replace_lines", "move_file", "copy_file",   "delete_file"};
  return std::find(std::begin(kFileTools), std::end(kFileTools), name) != std::end(kFileTools);
}

}  // namespace

// How the agent phase ended decides whether there is anything to grade.
Step TrialRun::after_agent() {
  const auto& ep = r_.episode;
  if (ep.termination == agent::Termination::kInterrupted) return Fault::interruption();
  // A rejected key or an unknown model: the same on every trial.
  if (ep.stops_run) return Fault::setup(ep.error);
  // A container that broke under the agent: who did it decides (sandbox_watch.h).
  if (auto broken = sandbox_verdict()) return broken;
  if (ep.termination == agent::Termination::kInfraError) return Fault::infra(InfraKind::kProvider, ep.error);
  if (ep.termination == agent::Termination::kSandboxBroken) return Fault::infra(InfraKind::kSandbox, ep.error);
  // Nothing the agent started runs on into grading (stack/quiesce.h).
  if (!local_ && !agent_started_nothing())
    if (auto st = stack::stop_agent_processes(docker_, *up_); !st)
      return classify_running(st.error(), InfraKind::kSandbox);
  // A step's agent of its own user: its processes too.
  if (!local_ && !step_user_.empty())
    if (auto st = stop_user_processes(docker_, runner_, step_user_); !st)
      return classify_running(st.error(), InfraKind::kSandbox);
  return std::nullopt;
}

// Whether the agent phase cannot have left a process behind, so the --kill-all exec (a runc
// exec, one of a trial's costlier daemon calls) is not needed: forgectl's own runner (its
// command a sleep, nothing else runs as the agent), no MCP server, not a Harbor task (whose
// oracle runs solve.sh), and every call of either actor a file tool the helper serves itself,
// starting no process.
bool TrialRun::agent_started_nothing() const {
  if (task_.harbor || task_.environment.tools.mcp_server || tools_.mcp) return false;
  if (!policy::is_own_runner_image(up_->plan.runner.image)) return false;
  return std::all_of(r_.tool_log.begin(), r_.tool_log.end(),
                     [](const ToolLogEntry& e) { return is_file_tool(e.record.tool); });
}

// Whether a call of either actor ran a program in the runner (bash, and any built-in but the file
// tools and the server's own tools): then a task process dying beside it — the Python server
// OOM-killed by the agent's memory, in the one cgroup they share — is the agent's doing.
bool TrialRun::agent_ran_programs() const {
  const auto& mcp = tools_.mcp_tool_names;
  return std::any_of(r_.tool_log.begin(), r_.tool_log.end(), [&](const ToolLogEntry& e) {
    const auto& t = e.record.tool;
    return e.record.outcome != tools::ToolOutcome::Kind::kRefused && !is_file_tool(t) &&
           std::find(mcp.begin(), mcp.end(), t) == mcp.end();
  });
}

Step TrialRun::sandbox_verdict() {
  if (!watch_) return std::nullopt;
  bool suspect = std::any_of(r_.tool_log.begin(), r_.tool_log.end(), [](const ToolLogEntry& e) {
    return e.record.outcome == tools::ToolOutcome::Kind::kFailed;
  });
  SandboxVerdict v = watch_->verdict(suspect);
  switch (v.cause) {
    case SandboxVerdict::Cause::kIntact:
      return std::nullopt;
    case SandboxVerdict::Cause::kAgent:
      r_.episode.termination = agent::Termination::kSandboxDestroyed;
      return Fault::model(v.what);
    case SandboxVerdict::Cause::kOutside:
      return Fault::infra(InfraKind::kSandbox, v.what);
    case SandboxVerdict::Cause::kDaemon:
      return Fault::infra(InfraKind::kDaemon, v.what);
  }
  return std::nullopt;
}

}  // namespace forge::trial
