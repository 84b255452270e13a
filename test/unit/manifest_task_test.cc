// task.yaml as forgectl reads it: the real Tolokaforge examples, json_db normalisation, the
// system prompt's precedence, scripted flows, the oracle's solution, and every error class with
// its file:line, reported together with grading.yaml's and the environment's.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "manifest/initial_state_parse.h"
#include "manifest/python_server.h"
#include "manifest/task_parse.h"
#include "support/manifest_helpers.h"
#include "support/paths.h"

using namespace forge;
using namespace forge::manifest;
using forge::test::has;

namespace {

std::string data(const std::string& rel) { return forge::test::test_data_dir() + "/manifest/tasks/" + rel; }

// A task directory under /tmp with a valid head (5 lines) and a grading.yaml; removed at exit.
class TempTask : public forge::test::TempFiles {
 public:
  TempTask() : TempFiles("forgectl-task-") { write("grading.yaml", "transcript_rules: {max_turns: 3}\n"); }

  // task.yaml = the head, then `rest` from line 6 on.
  std::string task(const std::string& rest) const {
    write("task.yaml",
          "task_id: t1\nname: T\ncategory: test\ndescription: A task.\ngrading: grading.yaml\n" + rest);
    return file("task.yaml");
  }
};

TaskConfig loads(const std::string& path) {
  auto t = load_task(path);
  REQUIRE_MESSAGE(t, (t ? "" : t.error().what()));
  return std::move(*t);
}

std::string errors(const std::string& path) {
  auto t = load_task(path);
  REQUIRE_FALSE(t);
  CHECK(t.error().code == Errc::kInvalid);
  return t.error().message;
}

}  // namespace

TEST_CASE("task: Tolokaforge's package_public_example_01 with its grading.yaml") {
  TaskConfig t = loads(data("package_public_example_01"));
  CHECK(t.task_id == "package_public_example_01");
  CHECK(t.name == "Package API Minimal Example");
  CHECK(t.category == "knowledge_reasoning");
  CHECK(t.dir == data("package_public_example_01"));
  CHECK(t.path == data("package_public_example_01/task.yaml"));
  CHECK(t.adapter_type == "native");
  CHECK_FALSE(t.max_turns);
  CHECK(has(t.initial_user_message, "finish by saying 'analysis complete'"));
  REQUIRE(t.initial_state.filesystem_copy.size() == 1);
  CHECK(t.initial_state.filesystem_copy[0].from == "fixtures/problem.txt");
  CHECK(t.initial_state.filesystem_copy[0].to == "/env/fs/agent-visible/problem.txt");
  CHECK(t.initial_state.filesystem_copy[0].where.line == 7);
  CHECK(t.initial_state.tables.empty());
  CHECK(t.environment.tools.agent_enabled == std::vector<std::string>{"read_file", "write_file"});

  CHECK(t.user_simulator.mode == UserSimulatorConfig::Mode::kScripted);
  CHECK(t.user_simulator.persona == "cooperative");
  REQUIRE(t.user_simulator.scripted_flow.size() == 2);
  CHECK(t.user_simulator.scripted_flow[0].if_assistant_contains == "analysis complete");
  CHECK(t.user_simulator.scripted_flow[0].user == "Thanks. ###STOP###");
  CHECK(t.user_simulator.scripted_flow[1].is_default);
  CHECK(t.user_simulator.scripted_flow[1].user == "Please continue.");

  CHECK(t.system_prompt == "You are a helpful assistant.");
  CHECK(t.system_prompt_source == PromptSource::kFallback);
  CHECK_FALSE(t.solution.declared);

  const GradingConfig& g = t.grading;
  CHECK(g.path == data("package_public_example_01/grading.yaml"));
  CHECK(g.method == CombineMethod::kWeighted);
  CHECK(g.weights == std::map<std::string, double>{{"state_checks", 0.7}, {"transcript_rules", 0.3}});
  CHECK(g.pass_threshold == doctest::Approx(0.8));
  REQUIRE(g.state_checks.jsonpaths.size() == 2);
  const StateAssertion& a = g.state_checks.jsonpaths[0];
  CHECK(a.path_glob == "/env/fs/agent-visible/submissions/*");
  CHECK(a.op == StateAssertion::Op::kContainsCi);
  CHECK(a.expected_json == "\"42\"");
  CHECK(a.description == "The answer file holds the product");
  CHECK(a.where.line == 9);
  CHECK(g.state_checks.jsonpaths[1].expected_json == "\"6\"");
  CHECK(g.transcript_rules.max_turns == 6);
  REQUIRE(g.transcript_rules.required_actions.size() == 2);
  CHECK(g.transcript_rules.required_actions[0].name == "read_file");
  CHECK(g.transcript_rules.required_actions[0].arguments_json == R"({"path":"problem.txt"})");
  CHECK(g.transcript_rules.required_actions[0].compare_args == std::vector<std::string>{});
  CHECK(g.transcript_rules.required_actions[1].action_id == "write_answer");
  CHECK(g.transcript_rules.disallow_regex == std::vector<std::string>{"(?i)(cannot complete|i don't know|failed)"});
  CHECK_FALSE(g.llm_judge.present);
  CHECK_FALSE(g.custom_checks.present);
}

TEST_CASE("task: a shop_orders_02-style state task: json_db, golden actions, solution") {
  TaskConfig t = loads(data("shop_orders_02/task.yaml"));
  CHECK(t.max_turns == 14);
  // json_db normalised per table: a dict of dicts → its values, a list as is, another dict → [dict].
  const auto& db = t.initial_state.tables;
  CHECK(t.initial_state.json_db_path == data("shop_orders_02/fixtures/db.json"));
  REQUIRE(db.size() == 4);
  CHECK(db.at("customers") == std::vector<std::string>{R"({"id":"C-101","name":"Ada","balance":500.0})",
                                                       R"({"id":"C-102","name":"Grace","balance":20.5})"});
  CHECK(db.at("products").size() == 2);
  CHECK(db.at("orders").empty());
  CHECK(db.at("settings") == std::vector<std::string>{R"({"currency":"USD","tax_rate":0})"});
  CHECK(t.initial_state.unstable_fields == std::vector<std::string>{"orders.created_at", "updated_at"});

  CHECK(t.user_simulator.mode == UserSimulatorConfig::Mode::kLlm);
  CHECK(t.user_simulator.persona == "impatient");
  CHECK(has(t.user_simulator.backstory, "customer C-101"));
  CHECK(t.complexity == "medium");
  CHECK(t.expected_failure_modes == std::vector<std::string>{"wrong_quantity", "payment_not_confirmed"});
  CHECK(t.tags == std::vector<std::string>{"retail", "state"});
  CHECK(t.guidance == std::vector<std::string>{"Confirm the total with the customer before paying."});
  CHECK(t.disallowed_actions == std::vector<std::string>{"refund_order"});
  CHECK(t.system_prompt == "# Shop policy\nOnly place orders for the authenticated customer.\n");
  CHECK(t.system_prompt_source == PromptSource::kFile);
  CHECK(t.system_prompt_file == data("shop_orders_02/policy.md"));
  CHECK(t.adapter_settings_json == R"({"domain":"retail","strict":true})");

  REQUIRE(t.solution.declared);
  REQUIRE(t.solution.tool_calls.size() == 2);
  CHECK(t.solution.tool_calls[0].name == "place_order");
  CHECK(t.solution.tool_calls[0].arguments_json ==
        R"({"customer_id":"C-101","items":[{"sku":"W-1","qty":2},{"sku":"G-7","qty":1}]})");
  CHECK(t.solution.final_message == "Your order O-001 is paid: 141.01.");

  const GradingConfig& g = t.grading;
  CHECK(g.pass_threshold == doctest::Approx(0.9));
  CHECK(g.state_checks.hash.enabled);
  CHECK(g.state_checks.hash.weight == doctest::Approx(0.6));
  REQUIRE(g.state_checks.hash.golden_actions.size() == 2);
  CHECK(g.state_checks.hash.golden_actions[0].arguments_json ==
        R"({"customer_id":"C-101","items":[{"sku":"W-1","qty":2},{"sku":"G-7","qty":1}]})");
  CHECK(g.state_checks.hash.golden_actions[1].name == "confirm_payment");
  const auto& jp = g.state_checks.jsonpaths;
  REQUIRE(jp.size() == 7);
  CHECK(jp[0].path == "$.db.orders[0].status");
  CHECK(jp[0].op == StateAssertion::Op::kEquals);
  CHECK(jp[0].expected_json == "\"paid\"");
  CHECK(jp[2].expected_json == "2");
  CHECK(jp[4].expected_json == "141.01");
  CHECK(jp[5].op == StateAssertion::Op::kEqualsCi);
  CHECK(jp[6].op == StateAssertion::Op::kExists);
  CHECK(jp[6].expected_json.empty());

  const auto& ra = g.transcript_rules.required_actions;
  REQUIRE(ra.size() == 4);
  CHECK(ra[0].requestor == "assistant");  // forgectl's default; Tolokaforge's native adapter used "user"
  CHECK_FALSE(ra[0].compare_args);
  CHECK(ra[1].compare_args == std::vector<std::string>{"customer_id"});
  CHECK_FALSE(ra[2].compare_args);  // null: every argument
  CHECK(ra[3].requestor == "user");
  CHECK(ra[3].compare_args == std::vector<std::string>{});
  REQUIRE(g.transcript_rules.communicate_info.size() == 3);
  CHECK(g.transcript_rules.communicate_info[0].info == "O-001");
  CHECK(g.transcript_rules.communicate_info[0].required);
  CHECK(g.transcript_rules.communicate_info[2].info == "141.01");
  CHECK_FALSE(g.transcript_rules.communicate_info[2].required);
  CHECK(g.transcript_rules.required_tools == std::vector<std::string>{"place_order"});
  CHECK(g.transcript_rules.disallowed_tools == std::vector<std::string>{"refund_order"});
}

TEST_CASE("task: problems in task.yaml, grading.yaml and the environment are reported together, in order") {
  std::string f = data("everything_wrong/task.yaml");
  std::string g = data("everything_wrong/grading.yaml");
  std::string text = errors(data("everything_wrong"));
  INFO(text);
  INFO(text);
  std::vector<std::string> expected = {
      f + ":5:12: 'max_turns' must be positive",
      f + ":7:12: initial_state.json_db: 'fixtures/missing.json' does not exist",
      f + ":9:45: initial_state.filesystem.copy[0].to: '/etc/passwd' must be a file under /env/fs/agent-visible or /work",
      f + ":13:7: warning: user_simulator.scripted_flow[0]: {role: user, content} is sent in order",
      f + ":14:12: policies: unsupported key 'guidanse' (hint: did you mean 'guidance'?)",
      f + ":17:19: environment: 'network_policy'",
      f + ":18:1: unsupported key 'sytem_prompt' (hint: did you mean 'system_prompt'?)",
      g + ":3:32: combine.weights.llm_judge weighs a component this file does not configure",
      g + ":6:7: state_checks.jsonpaths[0]: one operator per assertion, got equals and contains",
      g + ":10:20: transcript_rules.disallow_regex[0]: '(unclosed': not a valid regular expression",
  };
  // No echoes: the broken assertion does not also make state_checks "empty".
  CHECK_FALSE(has(text, "nothing to check"));
  CHECK_FALSE(has(text, "grades nothing"));
  std::size_t at = 0;
  for (const auto& e : expected) {
    std::size_t found = text.find(e, at);
    CHECK_MESSAGE(found != std::string::npos, "missing, or out of order: " << e);
    if (found != std::string::npos) at = found;
  }
}

TEST_CASE("task: json_db inline, normalised the same way, and its failures") {
  TempTask t;
  TaskConfig task = loads(t.task("initial_state:\n"
                                 "  json_db:\n"
                                 "    users: {u1: {name: Ann, vip: true}, u2: {name: Bo, vip: false}}\n"
                                 "    orders: [{id: 1, sku: \"007\"}]\n"
                                 "    config: {mode: strict, retries: 3}\n"
                                 "    mixed: {a: {x: 1}, b: 2}\n"
                                 "    empty: {}\n"));
  const auto& db = task.initial_state.tables;
  CHECK(task.initial_state.json_db_path.empty());
  CHECK(db.at("users") == std::vector<std::string>{R"({"name":"Ann","vip":true})", R"({"name":"Bo","vip":false})"});
  CHECK(db.at("orders") == std::vector<std::string>{R"({"id":1,"sku":"007"})"});
  CHECK(db.at("config") == std::vector<std::string>{R"({"mode":"strict","retries":3})"});
  CHECK(db.at("mixed") == std::vector<std::string>{R"({"a":{"x":1},"b":2})"});  // not all values are dicts
  CHECK(db.at("empty") == std::vector<std::string>{"{}"});                       // as Tolokaforge: [{}]

  // The same rules on JSON text; a scalar table is one record.
  auto tables = normalise_json_db(R"({"a": [1, 2], "b": {"k": {"v": 1}}, "c": 5})");
  REQUIRE(tables);
  CHECK(tables->at("a") == std::vector<std::string>{"1", "2"});
  CHECK(tables->at("b") == std::vector<std::string>{R"({"v":1})"});
  CHECK(tables->at("c") == std::vector<std::string>{"5"});
  CHECK_FALSE(normalise_json_db("[1, 2]"));
  auto bad = normalise_json_db("{\n  \"a\": [1,\n}");
  REQUIRE_FALSE(bad);
  CHECK(has(bad.error().message, "invalid JSON at 3:1"));
  auto unstable = normalise_json_db(R"({"orders": [], "unstable_fields": ["orders.ts"]})");
  REQUIRE_FALSE(unstable);
  CHECK(has(unstable.error().message, "list unstable fields under initial_state.unstable_fields"));

  t.write("db/broken.json", "{\n  \"orders\": [\n    {\"id\": 1,}\n  ]\n}\n");
  std::string text = errors(t.task("initial_state: {json_db: db/broken.json}\n"));
  INFO(text);
  CHECK(has(text, t.file("task.yaml") + ":6:26: initial_state.json_db: '" + t.file("db/broken.json") +
                      "' is not valid JSON at 3:14: Missing a name for object member"));
  // PyYAML would read `yes` as true and 0755 as octal; forgectl refuses rather than differ.
  text = errors(t.task("initial_state:\n  json_db:\n    flags: {enabled: yes, mode: 0755}\n"));
  CHECK(has(text, t.file("task.yaml") + ":8:22: initial_state.json_db: 'enabled': 'yes' means different things"));
  CHECK(has(text, t.file("task.yaml") + ":8:33: initial_state.json_db: 'mode': '0755' means different things"));
  text = errors(t.task("initial_state: {json_db: [1, 2]}\n"));
  CHECK(has(text, ":6:26: initial_state.json_db must be a path to a JSON file or a mapping of tables"));
}

TEST_CASE("task: the system prompt's precedence: policy, file or __adapter__, fallback") {
  TempTask t;
  t.write("prompts/agent.md", "From the file.");
  // The policy wins over the file (which is still checked).
  TaskConfig task = loads(t.task("system_prompt: prompts/agent.md\n"
                                 "policies: {agent_system_prompt: \"From the policy.\", guidance: [Be brief.]}\n"));
  CHECK(task.system_prompt == "From the policy.");
  CHECK(task.system_prompt_source == PromptSource::kPolicy);
  CHECK(task.system_prompt_file == t.file("prompts/agent.md"));

  // An empty policy prompt does not count (Tolokaforge tests its truth).
  task = loads(t.task("system_prompt: prompts/agent.md\npolicies: {agent_system_prompt: \"\"}\n"));
  CHECK(task.system_prompt == "From the file.");
  CHECK(task.system_prompt_source == PromptSource::kFile);

  task = loads(t.task("system_prompt: __adapter__\npolicies: {guidance: [Be brief., Cite order ids.]}\n"));
  CHECK(task.system_prompt_source == PromptSource::kAdapter);
  CHECK(task.system_prompt.rfind("<instructions>\nYou are a customer service agent", 0) == 0);
  CHECK(has(task.system_prompt, "</instructions>\n<policy>\n- Be brief.\n- Cite order ids.\n</policy>"));

  task = loads(t.task("policies: {guidance: [Be brief., Cite order ids.]}\n"));
  CHECK(task.system_prompt == "You are a helpful assistant.\n\nGuidance:\n- Be brief.\n- Cite order ids.");
  CHECK(task.system_prompt_source == PromptSource::kFallback);

  std::string f = t.file("task.yaml");
  CHECK(has(errors(t.task("system_prompt: prompts/missing.md\n")),
            f + ":6:16: system_prompt: 'prompts/missing.md' does not exist"));
  CHECK(has(errors(t.task("system_prompt: ../../etc/passwd\n")),
            f + ":6:16: system_prompt: '../../etc/passwd' is outside the task directory"));
  CHECK(has(errors(t.task("system_prompt: /etc/passwd\n")),
            f + ":6:16: system_prompt: '/etc/passwd' must be relative to the task directory"));
}

TEST_CASE("task: scripted flow shapes, and the ones Tolokaforge silently ignored") {
  TempTask t;
  TaskConfig task = loads(t.task("user_simulator:\n"
                                 "  mode: scripted\n"
                                 "  scripted_flow:\n"
                                 "    - user: \"Please book the flight.\"\n"
                                 "    - {if_assistant_contains: \"confirm\", user: \"Yes, confirmed.\"}\n"
                                 "    - {default: \"###STOP###\"}\n"));
  const auto& flow = task.user_simulator.scripted_flow;
  REQUIRE(flow.size() == 3);
  CHECK(flow[0].if_assistant_contains.empty());
  CHECK(flow[0].user == "Please book the flight.");
  CHECK_FALSE(flow[0].is_default);
  CHECK(flow[1].if_assistant_contains == "confirm");
  CHECK(flow[1].user == "Yes, confirmed.");
  CHECK(flow[2].is_default);
  CHECK(flow[2].user == "###STOP###");

  std::string f = t.file("task.yaml");
  std::string text = errors(t.task("user_simulator:\n"
                                   "  mode: scripted\n"
                                   "  scripted_flow:\n"
                                   "    - {role: user, content: \"Compute 2+2.\"}\n"
                                   "    - {if_assistant_contains: \"done\"}\n"
                                   "    - {default: \"Ok.\", user: \"Hi.\"}\n"
                                   "    - {usr: \"Hi.\"}\n"
                                   "    - \"Just text\"\n"));
  INFO(text);
  CHECK(has(text, f + ":9:7: warning: user_simulator.scripted_flow[0]: {role: user, content} is sent in order, as "
                      "{user: …} is (Tolokaforge ignored this shape) (hint: write {user: \"…\"})"));
  CHECK(has(text, f + ":10:7: user_simulator.scripted_flow[1]: 'if_assistant_contains' needs the 'user' reply"));
  CHECK(has(text, f + ":11:7: user_simulator.scripted_flow[2]: 'default' stands alone"));
  CHECK(has(text, f + ":12:8: user_simulator.scripted_flow[3]: unsupported key 'usr' (hint: did you mean 'user'?)"));
  CHECK(has(text, f + ":13:7: user_simulator.scripted_flow[4] must be a mapping"));

  text = errors(t.task("user_simulator: {mode: llm, scripted_flow: [{user: Hi}]}\n"));
  CHECK(has(text, f + ":6:29: user_simulator.scripted_flow is used only with mode: scripted"));
  text = errors(t.task("user_simulator: {mode: human}\n"));
  CHECK(has(text, f + ":6:24: user_simulator.mode must be 'scripted' or 'llm', got 'human'"));
}

TEST_CASE("task: a scripted rule's tool_calls are the user's own calls, each named, with mapping arguments") {
  TempTask t;
  TaskConfig task = loads(t.task("user_simulator:\n"
                                 "  mode: scripted\n"
                                 "  scripted_flow:\n"
                                 "    - if_assistant_contains: \"vpn2\"\n"
                                 "      tool_calls:\n"
                                 "        - {name: replace_lines, arguments: {path: a.conf, old_text: x, new_text: y}}\n"
                                 "        - {name: read_file}\n"
                                 "      user: \"Done. ###STOP###\"\n"
                                 "    - {default: \"Which server?\"}\n"));
  const auto& flow = task.user_simulator.scripted_flow;
  REQUIRE(flow.size() == 2);
  REQUIRE(flow[0].tool_calls.size() == 2);
  CHECK(flow[0].tool_calls[0].name == "replace_lines");
  CHECK(flow[0].tool_calls[0].arguments_json == R"({"path":"a.conf","old_text":"x","new_text":"y"})");
  CHECK(flow[0].tool_calls[1].arguments_json == "{}");
  CHECK(flow[1].tool_calls.empty());

  std::string f = t.file("task.yaml");
  std::string text = errors(t.task("user_simulator:\n"
                                   "  mode: scripted\n"
                                   "  scripted_flow:\n"
                                   "    - {tool_calls: [{name: read_file}]}\n"
                                   "    - {user: Hi, tool_calls: [{arguments: {path: a}}]}\n"
                                   "    - {user: Hi, tool_calls: [{name: read_file, arguments: [a]}]}\n"));
  INFO(text);
  CHECK(has(text, f + ":9:7: user_simulator.scripted_flow[0] is empty"));
  CHECK(has(text, "user_simulator.scripted_flow[1].tool_calls[0] needs the tool's 'name'"));
  CHECK(has(text, "user_simulator.scripted_flow[2].tool_calls[0].arguments must be a mapping"));
}

TEST_CASE("task: initial_state errors, each at its line") {
  TempTask t;
  t.write("fixtures/a.txt", "a");
  t.write("tests/test.sh", "exit 0");
  t.write("solution/solve.sh", "true");
  std::string f = t.file("task.yaml");
  std::string text = errors(t.task("initial_state:\n"
                                   "  filesystem:\n"
                                   "    copy:\n"
                                   "      - {from: fixtures/a.txt, to: /env/fs/agent-visible/../../etc/a.txt}\n"
                                   "      - {from: fixtures/none.txt, to: /work/none.txt}\n"
                                   "      - {from: ../../etc/hosts, to: /work/hosts}\n"
                                   "      - {from: grading.yaml, to: /work/g.yaml}\n"
                                   "      - {from: tests/test.sh, to: /work/t.sh}\n"
                                   "      - {from: fixtures/a.txt, to: /work/dir/}\n"
                                   "      - {from: fixtures/a.txt}\n"
                                   "  mock_web: {base_url: \"localhost:8080\"}\n"
                                   "  rag: {corpus_dir: docs}\n"
                                   "  unstable_fields: [\"a.b.c\"]\n"
                                   "  device_overrides: {battery: 5}\n"
                                   "  initialization_actions: [{env_type: user, func_name: f}]\n"
                                   "  system_prompt: x\n"
                                   "  json_bd: {}\n"));
  INFO(text);
  CHECK(has(text, f + ":9:36: initial_state.filesystem.copy[0].to: '/env/fs/agent-visible/../../etc/a.txt' must be a file "
                      "under /env/fs/agent-visible or /work"));
  CHECK(has(text, f + ":10:16: initial_state.filesystem.copy[1].from: 'fixtures/none.txt' does not exist"));
  CHECK(has(text, f + ":11:16: initial_state.filesystem.copy[2].from: '../../etc/hosts' is outside the task directory"));
  CHECK(has(text, f + ":12:16: initial_state.filesystem.copy[3].from: 'grading.yaml' is a grading asset"));
  CHECK(has(text, f + ":13:16: initial_state.filesystem.copy[4].from: 'tests/test.sh' is a grading asset"));
  CHECK(has(text, f + ":14:36: initial_state.filesystem.copy[5].to: '/work/dir/' names a directory"));
  CHECK(has(text, f + ":15:9: initial_state.filesystem.copy[6] needs both 'from' and 'to'"));
  CHECK(has(text, f + ":16:24: initial_state.mock_web.base_url: 'localhost:8080' is not an http(s) URL"));
  CHECK(has(text, f + ":17:21: initial_state.rag.corpus_dir: 'docs' does not exist"));
  CHECK(has(text, f + ":18:20: initial_state.unstable_fields: 'a.b.c' is not 'field' or 'table.field'"));
  CHECK(has(text, f + ":19:3: initial_state.device_overrides is not supported"));
  CHECK(has(text, f + ":20:3: initial_state.initialization_actions is not supported (hint: seed the state through json_db"));
  CHECK(has(text, f + ":21:3: warning: initial_state.system_prompt has no effect: Tolokaforge never read it either "
                      "(hint: set the top-level 'system_prompt' instead)"));
  CHECK(has(text, f + ":22:3: initial_state: unsupported key 'json_bd' (hint: did you mean 'json_db'?)"));

  // A grading asset under another name: the grading file itself, the test dir, the solution.
  t.write("checks/grade.yaml", "custom_checks: {command: \"sh /tests/run.sh\", dir: checks}\n");
  t.write("task.yaml", "task_id: t1\nname: T\ncategory: test\ndescription: A task.\ngrading: checks/grade.yaml\n"
                       "solution: {script: solution/solve.sh}\n"
                       "initial_state:\n"
                       "  filesystem:\n"
                       "    copy: [{from: checks/grade.yaml, to: /work/g.yaml}, {from: solution/solve.sh, to: /work/s.sh}]\n");
  text = errors(t.file("task.yaml"));
  CHECK(has(text, f + ":9:12: initial_state.filesystem.copy: 'checks/grade.yaml' is a grading asset ('checks/grade.yaml')"));
  CHECK(has(text, f + ":9:12: initial_state.filesystem.copy: 'checks/grade.yaml' is a grading asset ('checks')"));
  CHECK(has(text, f + ":9:64: initial_state.filesystem.copy[1].from: 'solution/solve.sh' is a grading asset"));
  CHECK_FALSE(has(text, "custom_checks.dir"));  // relative to the task directory, not to checks/
}

TEST_CASE("task: top-level errors: required keys, adapter_type, grading, solution, nested typos") {
  TempTask t;
  std::string f = t.file("task.yaml");
  t.write("task.yaml", "task_id: t1\ncategory: [a]\nmax_turns: many\n");
  std::string text = errors(t.file("task.yaml"));
  INFO(text);
  CHECK(has(text, f + ":1:1: the task has no 'name'"));
  CHECK(has(text, f + ":1:1: the task has no 'description'"));
  CHECK(has(text, f + ":1:1: the task has no 'grading' (hint: name its grading.yaml: grading: grading.yaml)"));
  CHECK(has(text, f + ":2:11: 'category' must be a string, got a list"));
  CHECK(has(text, f + ":3:12: 'max_turns' must be an integer, got 'many'"));

  text = errors(t.task("adapter_type: tau\n"));
  CHECK(has(text, f + ":6:15: adapter_type 'tau' is not supported yet (hint: forgectl reads native tasks)"));
  text = errors(t.task("adapter_type: custom\n"));
  CHECK(has(text, f + ":6:15: adapter_type must be 'native', got 'custom'"));
  t.write("task.yaml", "task_id: t1\nname: T\ncategory: test\ndescription: A task.\ngrading: missing.yaml\n");
  CHECK(has(errors(t.file("task.yaml")), f + ":5:10: grading: 'missing.yaml' does not exist"));

  t.write("solution/solve.sh", "true\n");
  text = errors(t.task("solution:\n"
                       "  tool_calls: [{name: pay, arguments: {confirm: yes}}, {arguments: {}}, {name: x, kwargs: {}}]\n"
                       "  script: solution/solve.sh\n"
                       "  final_mesage: done\n"));
  CHECK(has(text, f + ":7:49: solution.tool_calls[0].arguments: 'confirm': 'yes' means different things in YAML 1.1 and 1.2"));
  CHECK(has(text, f + ":7:56: solution.tool_calls[1] needs the tool's 'name'"));
  CHECK(has(text, f + ":7:83: solution.tool_calls[2]: unsupported key 'kwargs'"));
  CHECK(has(text, f + ":9:3: solution: unsupported key 'final_mesage' (hint: did you mean 'final_message'?)"));
  text = errors(t.task("solution:\n  tool_calls: [{name: pay}]\n  script: solution/solve.sh\n"));
  CHECK(has(text, f + ":7:3: solution: give either 'tool_calls' or 'script', not both"));
  TaskConfig task = loads(t.task("solution: {script: solution/solve.sh, final_message: Done.}\n"));
  CHECK(task.solution.script == "solution/solve.sh");
  CHECK(task.solution.final_message == "Done.");

  text = errors(t.task("metadata: {tag: [x], complexity: [hard]}\npolicies: {guidance: \"one string\"}\n"
                       "adapter_settings: [x]\n"));
  CHECK(has(text, f + ":6:12: metadata: unsupported key 'tag' (hint: did you mean 'tags'?)"));
  CHECK(has(text, f + ":6:34: metadata: 'complexity' must be a string, got a list"));
  CHECK(has(text, f + ":7:22: policies: 'guidance' must be a list, got 'one string'"));
  CHECK(has(text, f + ":8:19: 'adapter_settings' must be a mapping"));

  // The environment loader's own checks (tools, unknown top-level keys) are part of the report.
  text = errors(t.task("tools: {agent: {enabled: [\"bad name\"]}}\n"));
  CHECK(has(text, f + ":6:26: tools.agent.enabled: 'bad name' is not a tool name"));
}

TEST_CASE("task: what load_task accepts as a path") {
  CHECK(load_task(data("nope")).error().code == Errc::kNotFound);
  CHECK(has(load_task(data("distributed_run")).error().message, "is a directory without a task.yaml"));
  TempTask t;
  t.write("other.yaml", "name: x\n");
  auto r = load_task(t.file("other.yaml"));
  REQUIRE_FALSE(r);
  CHECK(has(r.error().message, t.file("other.yaml") + ":1:1: not a task: no 'task_id'"));
  t.write("task.yaml", "task_id: [\n");
  CHECK(has(load_task(t.dir()).error().message, "YAML syntax error"));
  t.write("task.yaml", "- a\n");
  CHECK(has(load_task(t.dir()).error().message, ":1:1: a task.yaml must be a mapping of keys"));
}

TEST_CASE("task: mcp_server: <script.py> is a Python server run in forgectl's image, its grading assets left out") {
  TempTask t;
  t.write("mcp_server.py", "print('server')\n");
  t.write("helpers/util.py", "X = 1\n");
  const std::string tools = "tools:\n  agent:\n    enabled: [get_x, _tolokaforge_get_state_]\n    mcp_server: mcp_server.py\n";
  TaskConfig cfg = loads(t.task(tools));
  const auto& m = cfg.environment.tools.mcp_server;
  REQUIRE(m);
  CHECK(m->python());
  CHECK(m->script == "mcp_server.py");
  CHECK(m->root == t.dir());
  CHECK(cfg.environment.manifest.runner.image == "forgectl/python:local");
  CHECK(cfg.environment.tools.agent_enabled == std::vector<std::string>{"get_x"});  // the state tools dropped

  CHECK(manifest::server_copy_skips("grading.yaml", false));
  CHECK(manifest::server_copy_skips("sub/checks.py", false));
  CHECK(manifest::server_copy_skips("tests", true));
  CHECK(manifest::server_copy_skips("solution.sh", false));
  CHECK_FALSE(manifest::server_copy_skips("helpers/util.py", false));
  CHECK_FALSE(manifest::server_copy_skips("initial_state.json", false));

  // Another runner image, or a runner user that could touch the server, is refused.
  std::string text = errors(t.task(tools + "environment:\n  runner: {image: \"debian:12\"}\n"));
  CHECK(has(text, "a Python server runs in forgectl/python:local, not in environment.runner.image 'debian:12'"));
  text = errors(t.task(tools + "environment:\n  runner: {user: \"3000:3000\"}\n"));
  CHECK(has(text, "could signal the Python server"));
  // A grading file under a name the copy does not leave out would reach the runner.
  t.write("rubric.yaml", "transcript_rules: {max_turns: 3}\n");
  t.write("task.yaml", "task_id: t1\nname: T\ncategory: test\ndescription: A task.\ngrading: rubric.yaml\n" + tools);
  text = errors(t.file("task.yaml"));
  CHECK(has(text, "grading 'rubric.yaml' would be copied beside the server"));
  text = errors(t.task("tools:\n  agent:\n    enabled: [x]\n    mcp_server: missing.py\n"));
  CHECK(has(text, "tools.agent.mcp_server"));
  CHECK(manifest::python_root("/a/b/task", {"/a/b/task/s.py"}).value() == "/a/b/task");
  CHECK(manifest::python_root("/a/b/task", {"/a/mcp_server.py"}).value() == "/a");
  CHECK_FALSE(manifest::python_root("/a/b/c/d/task", {"/x.py"}).has_value());
}
