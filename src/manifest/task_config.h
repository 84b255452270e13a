// task.yaml beyond the environment and tools blocks: what the agent loop and grading need.
// Value types; parsed in task_parse.cc.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "manifest/compose.h"
#include "manifest/diagnostics.h"
#include "manifest/environment.h"
#include "manifest/grading_config.h"
#include "manifest/harbor/harbor_task.h"

namespace forge::manifest {

struct FileCopy {
  std::string from;  // relative to the task dir
  std::string to;    // absolute in the runner: /env/fs/agent-visible/… or /work/…
  SourceLocation where;  // the entry in task.yaml, for messages at copy time
};

struct InitialState {
  // json_db: tables → records, normalised as Tolokaforge's native adapter does (a list is the
  // records; a dict of dicts becomes their values; any other dict becomes one record).
  std::map<std::string, std::vector<std::string>> tables;  // table → records as JSON text
  // The json_db document as written (JSON text), un-normalised: what a Python tool server is
  // seeded with, whose tools may keep records keyed by id. Empty when json_db is absent.
  std::string json_db_json;
  std::vector<std::string> unstable_fields;                 // "table.field" or "field"
  std::vector<FileCopy> filesystem_copy;
  std::string mock_web_base_url;
  SourceLocation mock_web_where;  // the base_url entry, for messages about it
  std::string json_db_path;    // absolute, when json_db names a file; empty when inline or absent
  std::string rag_corpus_dir;  // absolute; empty: no rag corpus (stored; the rag service indexes it)
};

struct ScriptedRule {
  std::string if_assistant_contains;  // empty: an in-order message
  std::string user;                   // the reply
  bool is_default = false;            // `default: text`
  // forgectl's addition: calls the user makes with its own tools (tools.user.enabled) when the
  // rule fires, in order, before the reply: dual control without a model playing the user.
  std::vector<GoldenAction> tool_calls;
};

struct UserSimulatorConfig {
  enum class Mode { kScripted, kLlm } mode = Mode::kLlm;
  std::string persona = "cooperative";
  std::string backstory;
  std::vector<ScriptedRule> scripted_flow;
};

// forgectl's oracle: the task's reference solution, replayed through the same tool path.
struct Solution {
  bool declared = false;                 // the task has a `solution:` block
  std::vector<GoldenAction> tool_calls;  // golden tool calls, in order
  std::string script;                    // or a shell script (relative path), run via the bash tool
  std::string final_message;             // the oracle's last assistant message
};

// Where TaskConfig::system_prompt came from, in order of precedence (docs/task.md).
enum class PromptSource { kPolicy, kFile, kAdapter, kFallback };

struct TaskConfig {
  std::string task_id, name, category, description;
  std::string dir;  // absolute task directory
  std::string path;  // absolute task.yaml
  std::string adapter_type = "native";  // the only one supported
  std::optional<int> max_turns;
  std::string initial_user_message;
  InitialState initial_state;
  UserSimulatorConfig user_simulator;
  std::string system_prompt;  // resolved text (policies.agent_system_prompt, file, or fallback)
  PromptSource system_prompt_source = PromptSource::kFallback;
  std::string system_prompt_file;  // absolute, when `system_prompt` names a file
  std::vector<std::string> guidance;
  std::vector<std::string> disallowed_actions;  // policies.disallowed_actions: stored, not enforced
  std::vector<std::string> tags;
  std::string complexity;
  std::vector<std::string> expected_failure_modes;
  std::string adapter_settings_json;  // opaque, as JSON; empty when absent
  GradingConfig grading;
  Solution solution;
  LoadedEnvironment environment;  // the environment block, compose and tools
  // Keys accepted without the effect their author may expect (Tolokaforge's legacy spellings), in
  // report order, task.yaml's first: shown by validate and once by run, never failing the load.
  std::vector<Diagnostic> warnings;
  // A Harbor or Terminal-Bench 1 task (harbor_load.h): its own phases run it (trial/harbor_trial.h),
  // and `grading` is empty. Null for a Tolokaforge task.
  std::shared_ptr<const HarborTask> harbor;
};

}  // namespace forge::manifest
