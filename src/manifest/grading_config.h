// grading.yaml (Tolokaforge's native format, every key honoured): value types; parsed in
// grading_parse.cc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "manifest/compose.h"

namespace forge::manifest {

enum class CombineMethod { kWeighted, kAll, kAny };

// One JSONPath assertion on the final state (`path`, over {db: …}) or file check (`path_glob`
// over the runner's workspace). At most one operator; none means "exists".
struct StateAssertion {
  std::string path;       // JSONPath, e.g. "$.db.orders[0].status"
  std::string path_glob;  // e.g. "/env/fs/agent-visible/submissions/*"
  // manifest/state_ops.h names them and says what operand each takes.
  enum class Op {
    kExists, kNotExists, kEquals, kNotEquals, kEqualsCi, kContains, kContainsCi, kNotContains,
    kGt, kGte, kLt, kLte, kIn, kNotIn, kRegex, kNotRegex, kLenGt, kLenGte, kDateGt, kDateGte, kDateLt, kDateLte,
  } op = Op::kExists;
  std::string expected_json;  // the operand, as JSON text (strings quoted); empty for (not_)exists
  std::string description;
  SourceLocation where;
};

struct GoldenAction {
  std::string name;            // tool name
  std::string arguments_json;  // `kwargs`, as a JSON object
};

struct HashCheck {
  bool enabled = false;
  std::optional<std::string> expected_state_hash;
  std::vector<GoldenAction> golden_actions;
  double weight = 1.0;  // the hash's share of the state score when blended with assertions
};

struct StateChecks {
  bool present = false;
  std::vector<StateAssertion> jsonpaths;
  HashCheck hash;
};

struct RequiredAction {
  std::string action_id;
  std::string requestor = "assistant";  // assistant | user
  std::string name;
  std::string arguments_json;  // a JSON object
  // nullopt: compare all arguments; empty: the name alone; else these keys.
  std::optional<std::vector<std::string>> compare_args;
};

struct CommunicateInfo {
  std::string info;
  bool required = true;
};

struct TranscriptRules {
  bool present = false;
  std::vector<std::string> must_contain;
  std::vector<std::string> disallow_regex;
  std::optional<int> max_turns;
  std::vector<std::string> required_tools, disallowed_tools;  // tool_expectations
  std::vector<RequiredAction> required_actions;
  std::vector<CommunicateInfo> communicate_info;
};

struct LlmJudge {
  bool present = false;
  std::string model_ref;  // a key of the run config's models (e.g. "judge"), or provider/name
  std::string rubric;
  std::string output_schema_json;  // JSON Schema the judge's answer must satisfy; empty: {score, reasons}
  std::string system_prompt;
  std::vector<std::string> tool_packs;  // stored; the judge is not agentic
};

// Test scripts and custom checks: copied in only after the agent loop, run in a fresh grader
// container started from a snapshot of the runner's workspace.
struct TestScripts {
  bool present = false;
  std::string dir = "tests";           // relative to the task dir
  std::string command = "sh tests/test.sh";  // run in the grader, workdir = the workspace copy
  std::string image;                   // empty: the runner's image
  double timeout_s = 300;
  std::string reward_file;             // e.g. /logs/verifier/reward.txt; empty: the exit code decides
  bool enabled = true;                 // `enabled: false` keeps the block but never runs it (present = false)

  // Tolokaforge's in-process Python checks (`file: checks.py`): run by forgectl's checks driver in
  // a fresh container of forgectl/python:local, as the verifier, never where the agent ran. `dir`,
  // `command`, `image` and `reward_file` do not apply; timeout_s defaults to 30.
  std::string checks_file;                    // relative to the task dir; empty: a test script
  std::string interface_version = "1.0";
  std::vector<std::string> relative_imports;  // directories, relative to the task dir, as written
  std::string checks_root;                    // absolute: the task dir, or the project dir holding the imports
  bool fail_on_error = true;                  // false: checks that cannot run score nothing (not evaluated)
  bool python() const { return !checks_file.empty(); }
};

// forgectl's own `egress` block (docs/grading.md "egress"): rules over the trial's egress ledger
// (egress.jsonl). A gate, not a weighed score: a rule that fails makes the trial score 0 and fail.
struct EgressRules {
  bool present = false;
  // The ledger phases the rules look at: "setup", "agent", "between" (an entry outside every
  // phase). Default: the agent's phase and the gaps around it.
  std::vector<std::string> phases{"agent", "between"};
  // Normalised host patterns: "name" (that name only) or ".name" (the name and every subdomain),
  // lower case, no trailing dot.
  std::vector<std::string> forbid_hosts;
  bool forbid_any_outside_allowlist = false;  // any refused DNS query or denied request fails
  std::optional<std::int64_t> max_requests;   // HTTP requests (allowed or denied); DNS queries do not count
  std::vector<std::string> forbid_paths;      // globs (`*` any run of characters) over plain-HTTP paths
  SourceLocation where;                       // the `egress:` key, for messages
};

struct GradingConfig {
  std::string path;  // absolute
  CombineMethod method = CombineMethod::kWeighted;
  std::map<std::string, double> weights;  // state_checks | transcript_rules | llm_judge | custom_checks
  // load_grading() uses 1.0 when combine.pass_threshold is absent, as Tolokaforge's production
  // (native adapter → runner) path does; 0.8 is only its documented host-side default.
  double pass_threshold = 0.8;
  StateChecks state_checks;
  TranscriptRules transcript_rules;
  LlmJudge llm_judge;
  TestScripts custom_checks;
  EgressRules egress;
};

}  // namespace forge::manifest
