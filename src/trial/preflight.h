// Preflight: everything a run can know to be wrong before its first trial, checked once — every
// task and its grading, every model entry and key variable, judge and user routes, tool names,
// MCP declarations, JSONPaths, oracle solutions. `forgectl validate` runs exactly these checks
// (without Docker); `forgectl run` runs them and then resolves images on the engine. Any problem
// is a setup error: exit 2, every problem listed, nothing started, nothing recorded.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agent/llm_context.h"
#include "manifest/run_config.h"
#include "manifest/task_config.h"
#include "trial/agent_choice.h"

namespace forge::trial {

// A warning is shown and never stops a run (a key without effect); an error is a setup error.
enum class Severity { kError, kWarning };

// One problem: where (file:line:column, or a file, or an argument) and what.
struct Problem {
  std::string where;
  std::string message;
  Severity severity = Severity::kError;
  // "where: message"; a warning's message is preceded by "warning: ".
  std::string text() const {
    std::string m = severity == Severity::kWarning ? "warning: " + message : message;
    return where.empty() ? m : where + ": " + m;
  }
};

struct PreflightInput {
  const manifest::RunConfig* run = nullptr;  // null: a default run config (validate without --config)
  std::vector<AgentChoice> agents;           // empty: check the tasks alone
  // Model entries are resolved (provider, base_url, key variable set) through this; null: they
  // are not (validate without --config).
  const agent::LlmContext* llm = nullptr;
  // `forgectl run --executor local`: every task runs on the local executor (set on each task as
  // it loads, so the local checks apply); kContainer leaves each task's own tools.executor.
  manifest::ExecutorKind executor = manifest::ExecutorKind::kContainer;
  // `forgectl run`: a task's own `tools.executor: local` runs its shell on this host, so a task
  // file alone cannot ask for it: the run must allow it (--allow-local, or --executor local).
  // validate leaves this off: consent is the run's.
  bool local_needs_consent = false;
  bool allow_local = false;
};

// "file:line:column" of `w`, or `fallback` when it has no file.
std::string location(const manifest::SourceLocation& w, const std::string& fallback);

// The problems of one loaded task under this run.
std::vector<Problem> check_task(const manifest::TaskConfig& task, const PreflightInput& in);

// The problems of the run's own model entries (agents, and the models tasks route to).
std::vector<Problem> check_models(const std::vector<const manifest::TaskConfig*>& tasks, const PreflightInput& in);

}  // namespace forge::trial
