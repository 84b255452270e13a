// grading.yaml as forgectl reads it: every key of Tolokaforge's format, how components combine,
// and each refused regex construct with its file:line (the regex syntax: python_regex_test.cc).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "manifest/grading_parse.h"
#include "support/manifest_helpers.h"

using namespace forge;
using namespace forge::manifest;
using forge::test::has;

namespace {

// A task directory under /tmp holding a grading.yaml; removed at exit.
class TempGrading : public forge::test::TempFiles {
 public:
  TempGrading() : TempFiles("forgectl-grading-") {}
  GradingConfig loads(const std::string& text) const {
    auto g = load_grading(write("grading.yaml", text));
    REQUIRE_MESSAGE(g, (g ? "" : g.error().what()));
    return std::move(*g);
  }
  // The error text, every line prefixed with the file's path: lines read "L:C: message".
  std::string errors(const std::string& text) const {
    std::string file = write("grading.yaml", text);
    auto g = load_grading(file);
    REQUIRE_FALSE(g);
    CHECK(g.error().code == Errc::kInvalid);
    std::string out = g.error().message, prefix = file + ":";
    for (std::size_t at = out.find(prefix); at != std::string::npos; at = out.find(prefix, at)) out.erase(at, prefix.size());
    return out;
  }
};

}  // namespace

TEST_CASE("grading: combine methods, aliases, defaults") {
  TempGrading t;
  GradingConfig g = t.loads("combine: {method: all_pass}\ntranscript_rules: {must_contain: [done]}\n");
  CHECK(g.method == CombineMethod::kAll);
  g = t.loads("combine: {method: any}\ntranscript_rules: {must_contain: [done]}\n");
  CHECK(g.method == CombineMethod::kAny);
  g = t.loads("combine: {method: any_pass, pass_threshold: 0.5}\ntranscript_rules: {must_contain: [done]}\n");
  CHECK(g.method == CombineMethod::kAny);
  CHECK(g.pass_threshold == doctest::Approx(0.5));

  // No combine: weighted, every configured component weighs 1, and the threshold is Tolokaforge's
  // production default, 1.0.
  g = t.loads("transcript_rules: {max_turns: 4}\nllm_judge: {rubric: \"Was the user helped?\"}\n");
  CHECK(g.method == CombineMethod::kWeighted);
  CHECK(g.weights == std::map<std::string, double>{{"llm_judge", 1.0}, {"transcript_rules", 1.0}});
  CHECK(g.pass_threshold == doctest::Approx(1.0));
  CHECK(g.path == t.dir() + "/grading.yaml");

  // A directory means its grading.yaml.
  auto d = load_grading(t.dir());
  REQUIRE(d);
  CHECK(d->llm_judge.rubric == "Was the user helped?");
  CHECK(load_grading(t.dir() + "/nope.yaml").error().code == Errc::kNotFound);
  TempGrading empty_dir;
  CHECK(load_grading(empty_dir.dir()).error().code == Errc::kNotFound);
}

TEST_CASE("grading: combine errors") {
  TempGrading t;
  std::string text = t.errors("combine:\n"
                              "  method: majority\n"
                              "  weights: {state_checks: 0.5, transcript_rules: -1, llm_jugde: 1}\n"
                              "  pass_threshold: 1.5\n"
                              "transcript_rules: {max_turns: 3}\n");
  INFO(text);
  CHECK(has(text, "2:11: combine.method must be weighted, all or any, got 'majority'"));
  CHECK(has(text, "3:13: combine.weights.state_checks weighs a component this file does not configure"));
  CHECK(has(text, "3:50: combine.weights.transcript_rules must not be negative"));
  CHECK(has(text, "3:54: combine.weights: unsupported key 'llm_jugde' (hint: did you mean 'llm_judge'?)"));
  CHECK(has(text, "4:19: combine.pass_threshold must be between 0 and 1"));

  text = t.errors("combine: {weights: {transcript_rules: 0}}\ntranscript_rules: {max_turns: 3}\n");
  CHECK(has(text, "1:1: combine.weights: no component has a positive weight"));
  // A weight for a block with nothing to check is what Tolokaforge's combine skips: a warning, and
  // the file still grades nothing.
  text = t.errors("state_checks:\n  hash: {enabled: false}\ncombine: {weights: {state_checks: 1}}\n");
  CHECK(has(text, "3:21: warning: combine.weights.state_checks has no effect: state_checks has nothing to check"));
  CHECK(has(t.errors(""), "grading.yaml is empty"));
  CHECK(has(t.errors("trancript_rules: {max_turns: 3}\n"),
            "1:1: unsupported key 'trancript_rules' (hint: did you mean 'transcript_rules'?)"));
  CHECK(has(t.errors("transcript_rules: {max_turns: 3}\ntranscript_rules: {max_turns: 4}\n"),
            "2:1: 'transcript_rules' is given twice"));
}

TEST_CASE("grading: state_checks assertions and the hash") {
  TempGrading t;
  GradingConfig g = t.loads("state_checks:\n"
                            "  jsonpaths:\n"
                            "    - {path: \"$.db.orders[0]\", equals: {id: O-1, qty: 2, paid: true, note: null}}\n"
                            "    - {path: \"$.db.tags\", contains: [a, b]}\n"
                            "    - {path_glob: \"/work/out/*.md\", equals_ci: 42}\n"
                            "  hash: {enabled: true, expected_state_hash: abc123}\n"
                            "  env_assertions: []\n"
                            "  db_hash_check: false\n");
  const auto& jp = g.state_checks.jsonpaths;
  REQUIRE(jp.size() == 3);
  CHECK(jp[0].expected_json == R"({"id":"O-1","qty":2,"paid":true,"note":null})");
  CHECK(jp[1].op == StateAssertion::Op::kContains);
  CHECK(jp[1].expected_json == R"(["a","b"])");
  CHECK(jp[2].path_glob == "/work/out/*.md");
  CHECK(jp[2].expected_json == "42");
  CHECK(g.state_checks.hash.expected_state_hash == "abc123");
  CHECK(g.state_checks.hash.golden_actions.empty());
  CHECK(g.state_checks.present);

  std::string text = t.errors("state_checks:\n"
                              "  jsonpaths:\n"
                              "    - {path: $.a, path_glob: /work/*, equals: 1}\n"
                              "    - {description: no target}\n"
                              "    - {path: $.a, contains_ci: [x]}\n"
                              "    - {path: $.a, op: eq, expected: 1}\n"
                              "  hash:\n"
                              "    enabled: true\n"
                              "    weight: 2\n"
                              "  env_assertions: [{env_type: user, func_name: check}]\n"
                              "  db_hash_check: true\n");
  INFO(text);
  CHECK(has(text, "3:7: state_checks.jsonpaths[0]: give 'path' or 'path_glob', not both"));
  CHECK(has(text, "4:7: state_checks.jsonpaths[1] needs 'path' (a JSONPath over the final state) or 'path_glob' (files)"));
  CHECK(has(text, "5:32: state_checks.jsonpaths[2].contains_ci compares text case-insensitively; give a string"));
  CHECK(has(text, "6:23: state_checks.jsonpaths[3].op: 'eq' is not an operator forgectl has"));
  CHECK(has(text, "9:13: state_checks.hash.weight must be between 0 and 1"));
  CHECK(has(text, "7:3: state_checks.hash is enabled but has neither golden_actions nor expected_state_hash"));
  CHECK(has(text, "10:3: state_checks.env_assertions is not supported (hint: assert on the final state"));
  CHECK(has(text, "11:18: state_checks.db_hash_check is not supported"));

  text = t.errors("state_checks:\n  hash:\n    enabled: true\n    golden_actions:\n"
                  "      - {name: pay, arguments: {id: 1}}\n      - {kwargs: {id: 1}}\n      - {name: pay, kwargs: [1]}\n");
  CHECK(has(text, "5:21: state_checks.hash.golden_actions[0]: unsupported key 'arguments'"));
  CHECK(has(text, "6:9: state_checks.hash.golden_actions[1] needs the tool's 'name'"));
  CHECK(has(text, "7:29: state_checks.hash.golden_actions[2].kwargs must be a mapping"));
}

TEST_CASE("grading: transcript_rules, required actions and what is communicated") {
  TempGrading t;
  GradingConfig g = t.loads("transcript_rules:\n"
                            "  must_contain: [\"order placed\"]\n"
                            "  disallow_regex: [\"(?i)refund\", \"\\\\bsorry\\\\b\"]\n"
                            "  required_actions:\n"
                            "    - {action_id: a1, name: lookup}\n"
                            "  communicate_info: [\"O-1\", {info: \"total\", required: false}]\n");
  const TranscriptRules& tr = g.transcript_rules;
  CHECK(tr.must_contain == std::vector<std::string>{"order placed"});
  CHECK(tr.disallow_regex == std::vector<std::string>{"(?i)refund", "\\bsorry\\b"});
  REQUIRE(tr.required_actions.size() == 1);
  CHECK(tr.required_actions[0].requestor == "assistant");
  CHECK(tr.required_actions[0].arguments_json == "{}");
  CHECK_FALSE(tr.required_actions[0].compare_args);
  CHECK(tr.communicate_info[1].info == "total");
  CHECK_FALSE(tr.communicate_info[1].required);

  std::string text = t.errors("transcript_rules:\n"
                              "  disallow_regex: [\"ok\", \"(?<=x)y\", \"[a-\"]\n"
                              "  max_turns: 0\n"
                              "  required_actions:\n"
                              "    - {action_id: a1, requestor: system, name: pay}\n"
                              "    - {action_id: a2, name: pay, arguments: {order_id: 1}, compare_args: [orderid]}\n"
                              "    - {action_id: a2, name: ship}\n"
                              "    - {action_id: a4}\n"
                              "  communicate_info: [{required: true}]\n"
                              "  tool_expectations: {required_tools: [pay], disallowed_tools: [pay]}\n");
  INFO(text);
  CHECK(has(text,
            "2:26: transcript_rules.disallow_regex[1]: '(?<=x)y': lookbehind (?<=…) is not supported by "
            "forgectl's regex engine (RE2, which matches in linear time without backtracking), at offset 0"));
  CHECK(has(text,
            "2:37: transcript_rules.disallow_regex[2]: '[a-': not a valid Python regular expression: "
            "unterminated character set at offset 0"));
  CHECK(has(text, "3:14: transcript_rules.max_turns must be positive"));
  CHECK(has(text, "5:34: transcript_rules.required_actions[0].requestor must be 'assistant' or 'user', got 'system'"));
  CHECK(has(text, "6:74: transcript_rules.required_actions[1].compare_args: 'orderid' is not one of the action's arguments"));
  CHECK(has(text, "7:7: transcript_rules.required_actions[2]: action_id 'a2' is used twice"));
  CHECK(has(text, "8:7: transcript_rules.required_actions[3] needs the tool's 'name'"));
  CHECK(has(text, "9:22: transcript_rules.communicate_info[0] needs the 'info' to communicate"));
  CHECK(has(text, "10:22: transcript_rules.tool_expectations: 'pay' is both required and disallowed"));
}

TEST_CASE("grading: llm_judge") {
  TempGrading t;
  GradingConfig g = t.loads("llm_judge:\n"
                            "  model_ref: judge\n"
                            "  rubric: \"Score 1 if the order was placed.\"\n"
                            "  system_prompt: \"You grade support chats.\"\n"
                            "  agentic: false\n"
                            "  tool_packs: [db_read]\n"
                            "  output_schema:\n"
                            "    type: object\n"
                            "    properties: {score: {type: number, minimum: 0, maximum: 1}, reasons: {type: string}}\n"
                            "    required: [score]\n");
  CHECK(g.llm_judge.present);
  CHECK(g.llm_judge.model_ref == "judge");
  CHECK(g.llm_judge.system_prompt == "You grade support chats.");
  CHECK(g.llm_judge.tool_packs == std::vector<std::string>{"db_read"});
  CHECK(g.llm_judge.output_schema_json ==
        R"({"type":"object","properties":{"score":{"type":"number","minimum":0,"maximum":1},"reasons":{"type":"string"}},"required":["score"]})");
  // A schema may also be written as JSON text.
  g = t.loads("llm_judge: {rubric: r, output_schema: '{\"type\": \"object\"}'}\n");
  CHECK(g.llm_judge.output_schema_json == R"({"type":"object"})");

  std::string text = t.errors("llm_judge:\n"
                              "  agentic: true\n"
                              "  output_schema: {type: array}\n"
                              "  modle_ref: judge\n");
  INFO(text);
  CHECK(has(text, "1:1: llm_judge needs a 'rubric'"));
  CHECK(has(text, "2:12: llm_judge.agentic is not supported yet"));
  CHECK(has(text, "3:18: llm_judge.output_schema must have \"type\": \"object\""));
  CHECK(has(text, "4:3: llm_judge: unsupported key 'modle_ref' (hint: did you mean 'model_ref'?)"));
  text = t.errors("llm_judge: {rubric: r, output_schema: {type: object, properties: {a: {}}, required: [b]}}\n");
  CHECK(has(text, "1:39: llm_judge.output_schema 'required' names 'b', which is not among its properties"));
}

TEST_CASE("grading: custom_checks run as a test script or as Tolokaforge checks.py") {
  TempGrading t;
  t.write("tests/test.sh", "exit 0\n");
  GradingConfig g = t.loads("custom_checks: {enabled: true}\n");
  CHECK(g.custom_checks.present);
  CHECK(g.custom_checks.dir == "tests");
  CHECK(g.custom_checks.command == "sh /tests/test.sh");  // the grader has the tests at /tests
  CHECK(g.weights == std::map<std::string, double>{{"custom_checks", 1.0}});

  g = t.loads(
      "combine: {weights: {transcript_rules: 0.5}}\n"
      "transcript_rules: {max_turns: 3}\n"
      "custom_checks:\n"
      "  command: \"python3 /tests/check.py --strict\"\n"
      "  image: python:3.12-slim\n"
      "  timeout_seconds: 45\n"
      "  reward_file: /logs/verifier/reward.txt\n"
      "  weight: 0.5\n"
      "  fail_on_error: true\n");
  CHECK(g.custom_checks.command == "python3 /tests/check.py --strict");
  CHECK(g.custom_checks.dir == "tests");
  CHECK(g.custom_checks.image == "python:3.12-slim");
  CHECK(g.custom_checks.timeout_s == doctest::Approx(45));
  CHECK(g.custom_checks.reward_file == "/logs/verifier/reward.txt");
  CHECK(g.weights == std::map<std::string, double>{{"custom_checks", 0.5}, {"transcript_rules", 0.5}});

  // Disabled: kept, never run; a weight for it is allowed (it is configured, just off).
  g = t.loads("combine: {weights: {custom_checks: 1, transcript_rules: 1}}\n"
              "transcript_rules: {max_turns: 3}\ncustom_checks: {enabled: false}\n");
  CHECK_FALSE(g.custom_checks.present);
  CHECK_FALSE(g.custom_checks.enabled);

  // Tolokaforge's checks.py form: a test script's keys do not apply to it; the file must exist.
  std::string text = t.errors("custom_checks:\n"
                              "  enabled: true\n"
                              "  file: checks.py\n"
                              "  interface_version: \"1.0\"\n"
                              "  timeout_s: 30\n"
                              "  reward_file: reward.txt\n"
                              "  fail_on_error: false\n"
                              "  dir: ../outside\n");
  INFO(text);
  CHECK(has(text, "5:3: custom_checks: unsupported key 'timeout_s' (hint: did you mean 'timeout_seconds'?)"));
  CHECK(has(text, "6:3: custom_checks.reward_file is a test script's key; these checks are a Python file"));
  CHECK(has(text, "8:3: custom_checks.dir is a test script's key; these checks are a Python file"));
  CHECK(has(text, "3:9: custom_checks.file: 'checks.py' does not exist"));
  text = t.errors("custom_checks: {command: \"true\", fail_on_error: false}\n");
  CHECK(has(text, "1:49: custom_checks.fail_on_error: false is not supported for a test script"));
  text = t.errors("custom_checks: {file: /abs/checks.py}\n");
  CHECK(has(text, "custom_checks.file must be a Python file relative to the task directory"));
  text = t.errors("custom_checks: {file: checks.txt}\n");
  CHECK(has(text, "custom_checks.file must be a Python file relative to the task directory, got 'checks.txt'"));

  // Both weights: combine.weights wins, as in Tolokaforge; the other is a warning (tf_legacy_test.cc).
  g = t.loads("combine: {weights: {custom_checks: 1}}\ncustom_checks: {command: \"true\", weight: 0.5}\n");
  CHECK(g.weights == std::map<std::string, double>{{"custom_checks", 1.0}});

  // checks.py beside grading.yaml and no test script: Tolokaforge's checks, with its 30 s default.
  TempGrading python;
  python.write("checks.py", "def check(ctx): return True\n");
  python.write("helpers/util.py", "X = 1\n");
  g = python.loads("custom_checks: {enabled: true}\n");
  CHECK(g.custom_checks.present);
  CHECK(g.custom_checks.python());
  CHECK(g.custom_checks.checks_file == "checks.py");
  CHECK(g.custom_checks.timeout_s == doctest::Approx(30));
  CHECK(g.custom_checks.command.empty());
  g = python.loads("custom_checks: {file: checks.py, interface_version: \"1.0\", relative_imports: [helpers], fail_on_error: false}\n");
  CHECK(g.custom_checks.relative_imports == std::vector<std::string>{"helpers"});
  CHECK_FALSE(g.custom_checks.fail_on_error);
  text = python.errors("custom_checks: {file: checks.py, relative_imports: [nothere]}\n");
  CHECK(has(text, "custom_checks.relative_imports"));

  // The reward's channel is the verifier's own directory; the tests are at /tests, not in the workspace.
  text = t.errors("custom_checks:\n  command: \"sh tests/test.sh\"\n  reward_file: /work/reward.txt\n");
  CHECK(has(text,
            "2:12: custom_checks.command: 'tests/test.sh' is relative to the workspace copy, where the tests are "
            "not (hint: the grader has custom_checks.dir at /tests: write /tests/test.sh)"));
  CHECK(has(text, "3:16: custom_checks.reward_file must be a file under /logs/verifier, the verifier's own directory"));
  text = t.errors("custom_checks: {command: \"true\", reward_file: /logs/verifier/../../work/r.txt}\n");
  CHECK(has(text, "custom_checks.reward_file must be a file under /logs/verifier"));
  g = t.loads("custom_checks: {command: \"sh /tests/test.sh\", reward_file: /logs/verifier/r.json}\n");
  CHECK(g.custom_checks.reward_file == "/logs/verifier/r.json");
}
