// A Tolokaforge-style project through the forgectl binary against the real daemon: two tasks under
// tasks/ share the project's wiki (their system prompt) and data file with "../../", carry legacy
// keys Tolokaforge dropped, start the project's MCP server, and `forgectl run PROJECT` grades the oracle as passing and the noop
// agent as failing, with each legacy key's warning at the start of the run and in validate.
// A tau-style project (tool classes loaded by the project's mcp_server.py) is graded from its server's state.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "results/trial_record.h"
#include "support/mcp_shout.h"
#include "support/process.h"
#include "support/run_files.h"
#include "support/scripted_trial.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

void put(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

// <dir>/tf-project with tasks/<id> for each id; the answer is in the project's shared data.
std::string write_project(const TempDir& dir, const std::vector<std::string>& ids) {
  fs::path root = fs::path(dir.path()) / "tf-project";
  put(root / "wiki.md", "You are the archive's clerk. Copy the code from input.txt into answer.txt.\n");
  put(root / "data" / "input.txt", "code 4217\n");
  put(root / "mcp_server.sh", kShoutMcpServer);
  for (const auto& id : ids) {
    put(root / "tasks" / id / "task.yaml",
        "task_id: " + id +
            "\nname: probe\ncategory: test\ndescription: \"Copy the code.\"\n"
            "system_prompt: ../../wiki.md\n"
            "initial_user_message: \"Copy the code from input.txt into answer.txt.\"\n"
            "initial_state:\n"
            "  filesystem:\n"
            "    copy: [{from: ../../data/input.txt, to: /env/fs/agent-visible/input.txt}]\n"
            "  workspace: {files: []}\n"
            "tools:\n  agent:\n    enabled: [read_file, write_file, shout]\n"
            "    mcp_server: {command: [sh, ../../mcp_server.sh], files: [../../mcp_server.sh]}\n"
            "  user: {enabled: []}\n"
            "user_simulator:\n  mode: scripted\n  scripted_flow:\n"
            "    - {role: user, content: \"Done? Then say so.\"}\n"
            "    - {default: \"Thanks. ###STOP###\"}\n"
            "grading: grading.yaml\n"
            "environment: {stack: none}\n"
            "solution:\n  tool_calls:\n"
            "    - {name: read_file, arguments: {path: input.txt}}\n"
            "    - {name: shout, arguments: {text: done}}\n"
            "    - {name: write_file, arguments: {path: answer.txt, content: \"4217\"}}\n");
    put(root / "tasks" / id / "grading.yaml",
        "combine: {method: weighted, pass_threshold: 1.0}\n"
        "state_checks:\n"
        "  jsonpaths:\n"
        "    - {path_glob: \"/env/fs/agent-visible/answer.txt\", op: contains, expected: \"4217\"}\n"
        "    - {path_glob: \"/env/fs/agent-visible/input.txt\", contains: \"code 4217\", required: true}\n"
        "  hash: {enabled: false, description: the archive}\n");
  }
  return root.string();
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("tf project run: two tasks sharing ../../ files grade the oracle as passing and noop as failing") {
  TempDir dir;
  const std::string root = write_project(dir, {"t1", "t2"});
  const std::string legacy[] = {"initial_state.workspace has no effect", "{role: user, content} is sent in order",
                                "op/expected are read as contains", ".required has no effect",
                                "state_checks.hash.description has no effect"};

  auto v = forgectl_run({"validate", root, "--json"});
  CAPTURE(v.text());
  CHECK(v.code == 0);
  CHECK(count(v.out, "\"severity\":\"warning\"") == 2 * std::size(legacy));

  for (const std::string agent : {"oracle", "noop"}) {
    CAPTURE(agent);
    const std::string out = dir.path() + "/run-" + agent;
    auto r = forgectl_run({"run", root, "--agent", agent, "--out", out});
    CAPTURE(r.text());
    REQUIRE(r.code == 0);
    // Each legacy key once per task, before any trial ("forgectl: warning: FILE:LINE:COL: …").
    for (const auto& w : legacy) CHECK(count(r.err, w) == 2);
    CHECK(r.err.find("forgectl: warning: ") < r.err.find("forgectl run "));
    CHECK(count(r.err, root + "/tasks/t1/task.yaml:10:3: initial_state.workspace") == 1);
    CHECK(count(r.err, root + "/tasks/t2/grading.yaml:6:26: state_checks.hash.description") == 1);

    auto trials = trials_of(out);
    REQUIRE(trials.size() == 2);
    for (const auto& t : trials) {
      CAPTURE(t.task_id);
      CHECK(t.outcome == results::Outcome::kGraded);
      if (agent == "oracle") {
        // Both assertions held: the shared data reached the workspace and the answer came from it.
        CHECK(t.binary_pass);
        CHECK(t.tool_calls == 3);  // read_file, the project's MCP tool, write_file
        CHECK(t.tool_errors == 0);
        CHECK(t.score == doctest::Approx(1.0));
      } else {
        CHECK_FALSE(t.binary_pass);
        CHECK(t.score < 1.0);
      }
    }
  }

  // The wiki reached the agent as its system prompt; the project's MCP server answered.
  bool found = false, shouted = false;
  for (const auto& e : fs::recursive_directory_iterator(dir.path() + "/run-oracle")) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".json" && ext != ".yaml" && ext != ".jsonl")) continue;
    std::ifstream in(e.path());
    std::string text((std::istreambuf_iterator<char>(in)), {});
    found = found || text.find("You are the archive's clerk.") != std::string::npos;
    shouted = shouted || text.find("DONE") != std::string::npos;
  }
  CHECK(found);
  CHECK(shouted);
}

namespace {

// A tau-style shop project: no stdio server of its own, tool classes in tau_tools/ with invoke(data, ...),
// the state in data/*.json loaded by the project-level mcp_server.py (get_data/set_data).
std::string write_tau_project(const TempDir& dir) {
  fs::path root = fs::path(dir.path()) / "tau-shop";
  put(root / "wiki.md", "You are the shop's support agent. Use the tools; never guess an order's state.\n");
  put(root / "data" / "orders.json",
      R"({"O-1": {"id": "O-1", "item": "lamp", "status": "pending"},)"
      R"( "O-2": {"id": "O-2", "item": "chair", "status": "pending"},)"
      R"( "O-3": {"id": "O-3", "item": "desk", "status": "shipped"}})");
  put(root / "mcp_server.py", R"PY("""The shop's tools for Tolokaforge's tau-style loader."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from tau_tools.cancel_order import CancelOrder  # noqa: E402
from tau_tools.find_order import FindOrder  # noqa: E402

_data = {}
TOOLS = {"find_order": FindOrder, "cancel_order": CancelOrder}


def get_data():
    return _data


def set_data(data):
    global _data
    _data = data


set_data({f.stem: json.loads(f.read_text()) for f in sorted((Path(__file__).parent / "data").glob("*.json"))})
)PY");
  put(root / "tau_tools" / "__init__.py", "");
  put(root / "tau_tools" / "find_order.py", R"PY(import json


class FindOrder:
    @staticmethod
    def invoke(data, order_id: str) -> str:
        order = data["orders"].get(order_id)
        return json.dumps(order if order else {"error": f"no order {order_id}"})

    @staticmethod
    def get_info():
        return {"type": "function", "function": {"name": "find_order", "description": "Look an order up by ID.",
                "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                               "required": ["order_id"]}}}
)PY");
  put(root / "tau_tools" / "cancel_order.py", R"PY(import json


class CancelOrder:
    @staticmethod
    def invoke(data, order_id: str) -> str:
        order = data["orders"].get(order_id)
        if not order:
            return json.dumps({"error": f"no order {order_id}"})
        if order["status"] != "pending":
            return json.dumps({"error": f"order {order_id} is {order['status']}"})
        order["status"] = "cancelled"
        return json.dumps(order)

    @staticmethod
    def get_info():
        return {"type": "function", "function": {"name": "cancel_order", "description": "Cancel a pending order.",
                "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                               "required": ["order_id"]}}}
)PY");
  put(root / "tasks" / "cancel_chair" / "task.yaml",
      "task_id: cancel_chair\nname: cancel the chair\ncategory: tau-shop\ndescription: \"Cancel O-2.\"\n"
      "system_prompt: ../../wiki.md\n"
      "initial_user_message: \"Please cancel my chair order, O-2.\"\n"
      "tools:\n  agent:\n    enabled: [find_order, cancel_order, bash]\n    mcp_server: ../../mcp_server.py\n"
      "  user: {enabled: []}\n"
      "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"Thanks. ###STOP###\"}\n"
      "grading: grading.yaml\n"
      "solution:\n  tool_calls:\n"
      "    - {name: find_order, arguments: {order_id: O-2}}\n"
      "    - {name: cancel_order, arguments: {order_id: O-2}}\n");
  put(root / "tasks" / "cancel_chair" / "grading.yaml",
      "combine: {method: weighted, pass_threshold: 1.0}\n"
      "state_checks:\n"
      "  hash:\n    enabled: true\n    golden_actions:\n      - {name: cancel_order, kwargs: {order_id: O-2}}\n"
      "  jsonpaths:\n"
      "    - {path: \"$.db.orders.O-2.status\", equals: cancelled}\n"
      "    - {path: \"$.db.orders.O-1.status\", equals: pending}\n");
  return root.string();
}

}  // namespace

TEST_CASE("tau-style project: tool classes behind the project's mcp_server.py; state and golden replay grade "
          "the oracle as passing; a wrong cancel, a cheat on the data files and noop fail") {
  TempDir dir;
  const std::string root = write_tau_project(dir);
  TempDir wrong_dir, cheat_dir;
  const std::string wrong =
      write_trajectory(wrong_dir, {{"", {{"cancel_order", R"({"order_id": "O-1"})"}}}, {"Done.", {}}});
  // The cheat: no tool call on the server, but rewrite every copy of orders.json the agent can find.
  const std::string cheat = write_trajectory(
      cheat_dir, {{"", {{"bash", bash("for f in $(find / -name orders.json 2>/dev/null); do echo \"$f\"; "
                                      "sed -i 's/pending/cancelled/' \"$f\" 2>&1; done; echo CHEAT-DONE")}}},
                  {"Done.", {}}});
  struct Case {
    std::string agent;
    bool pass;
  };
  for (const Case& c : {Case{"oracle", true}, Case{"replay:" + wrong, false}, Case{"replay:" + cheat, false},
                        Case{"noop", false}}) {
    CAPTURE(c.agent);
    const std::string out = dir.path() + "/run-" + std::to_string(c.pass) + "-" + random_hex(3);
    auto r = forgectl_run({"run", root, "--agent", c.agent, "--out", out});
    CAPTURE(r.text());
    REQUIRE(r.code == 0);
    auto trials = trials_of(out);
    REQUIRE(trials.size() == 1);
    const auto& t = trials[0];
    CHECK(t.outcome == results::Outcome::kGraded);
    CHECK(t.binary_pass == c.pass);
    if (c.pass) {
      CHECK(t.score == doctest::Approx(1.0));
      CHECK(t.tool_calls == 2);  // find_order and cancel_order, through the loader
      CHECK(t.tool_errors == 0);
    } else {
      CHECK(t.score < 1.0);
    }
  }
}
