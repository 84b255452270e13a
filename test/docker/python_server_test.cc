// Tolokaforge's Python tool server (`tools.agent.mcp_server: mcp_server.py`) in full trials against
// the real daemon: its tools offered to the agent, its state seeded from json_db and read back for
// the state checks, golden replay on a fresh server, and the agent's bash kept out of its state.
#include <doctest/doctest.h>

#include <filesystem>

#include "manifest/task_parse.h"
#include "support/checks_py.h"
#include "support/stack_env.h"
#include "support/trial_rig.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

// Split so that no command line or tool argument carries the marker itself.
const std::string kSecretHead = "SERVER-STATE-";
const std::string kSecret = kSecretHead + "c41d07";

// A bank of two accounts; the task is to move 30 from A to B. The server's own initial_state.json
// holds other balances and kSecret: json_db (fixtures/db.json) must replace it.
std::string write_bank_task(const TempDir& dir, bool with_checks = false) {
  fs::create_directories(fs::path(dir.path()) / "fixtures");
  dir.write("mcp_server.py", R"PY(from typing import Annotated

from pydantic import Field

from tolokaforge.core.tools_interface import ToolError, create_server

mcp, registry, TOOLS = create_server(__file__, "bank")


def _account(data: dict, account_id: str) -> dict:
    for a in data["accounts"]:
        if a["id"] == account_id:
            return a
    raise ToolError(f"Account '{account_id}' not found")


@registry.tool("Look up an account's balance.")
def get_account(data: dict, account_id: Annotated[str, Field(description="Account ID, e.g. 'A'")]) -> dict:
    return _account(data, account_id)


@registry.tool("Move money between two accounts.")
def transfer(
    data: dict,
    from_id: Annotated[str, Field(description="Paying account")],
    to_id: Annotated[str, Field(description="Receiving account")],
    amount: Annotated[int, Field(ge=1, description="How much")],
) -> dict:
    src, dst = _account(data, from_id), _account(data, to_id)
    if src["balance"] < amount:
        raise ToolError("Insufficient funds")
    src["balance"] -= amount
    dst["balance"] += amount
    data.setdefault("log", []).append({"from": from_id, "to": to_id, "amount": amount})
    return {"from": src, "to": dst}


if __name__ == "__main__":
    mcp.run(transport="stdio")
)PY");
  dir.write("initial_state.json",
            R"({"accounts": [{"id": "A", "balance": 1, "note": ")" + kSecret + R"("}, {"id": "B", "balance": 1}]})");
  dir.write("fixtures/db.json",
            R"({"accounts": [{"id": "A", "balance": 100, "note": ")" + kSecret + R"("}, {"id": "B", "balance": 5}]})");
  dir.write("task.yaml",
            "task_id: py_bank\nname: bank\ncategory: test\ndescription: \"Move 30 from A to B.\"\n"
            "initial_user_message: \"Please move 30 from account A to account B.\"\n"
            "initial_state:\n  json_db: fixtures/db.json\n"
            "tools:\n  agent:\n    enabled: [get_account, transfer, bash, _tolokaforge_get_state_]\n"
            "    mcp_server: mcp_server.py\n  user: {enabled: []}\n"
            // The probe greps the whole filesystem, which takes more than 30 s on a loaded machine.
            "  policies:\n    bash: {timeout_s: 120}\n"
            "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"Thanks. ###STOP###\"}\n"
            "grading: grading.yaml\n");
  dir.write("grading.yaml",
            "combine: {method: weighted, pass_threshold: 0.99}\n"
            "state_checks:\n"
            "  hash:\n    enabled: true\n    golden_actions:\n"
            "      - {name: transfer, kwargs: {from_id: A, to_id: B, amount: 30}}\n"
            "  jsonpaths:\n"
            "    - {path: \"$.db.accounts[0].balance\", equals: 70}\n"
            "    - {path: \"$.db.accounts[1].balance\", equals: 35}\n");
  if (with_checks) {
    // One check that holds for a correct agent, one that never does; each says where it ran.
    dir.write("checks.py", R"PY(import os

from tolokaforge.core.grading.checks_interface import CheckContext, CheckFailed, CheckPassed, check, init

_ctx = None


@init(interface_version="1.0")
def setup(ctx: CheckContext) -> None:
    global _ctx
    _ctx = ctx


def _balance(state, account_id):
    return next(a["balance"] for a in state["accounts"] if a["id"] == account_id)


@check
def a_paid_thirty():
    before, after = _balance(_ctx.initial_state.data, "A"), _balance(_ctx.final_state.data, "A")
    calls = [c.name for c in _ctx.tool_calls]
    said = " ".join(m.content for m in _ctx.transcript.agent_messages)
    where = f"uid {os.getuid()} runner-files {os.path.exists('/.forgectl-task')}"
    if before - after == 30 and "transfer" in calls and "30" in said:
        return CheckPassed(f"A {before} -> {after}; {where}")
    return CheckFailed(f"A {before} -> {after}, calls {calls}; {where}")


@check
def receipt_sent():
    return CheckFailed("no receipt tool exists")
)PY");
    dir.write("grading.yaml",
              "combine: {method: weighted, weights: {state_checks: 0.5, custom_checks: 0.5}, pass_threshold: 0.99}\n"
              "state_checks:\n  jsonpaths:\n    - {path: \"$.db.accounts[0].balance\", equals: 70}\n"
              "custom_checks: {file: checks.py, interface_version: \"1.0\"}\n");
  }
  return dir.path() + "/task.yaml";
}

// What the agent's bash tries against the server: its directory and files, and the memory maps
// and environment of every process running forgectl_mcp. The marker is assembled by the shell.
// The pattern's [p] keeps the shell (and its forks, which share its command line) from matching
// itself and stopping itself with the kill -STOP meant for the server.
std::string probe_script() {
  return "M=" + kSecretHead +
         "; M=${M}c41d07; id -u; ls /.forgectl-task/server 2>&1; "
         "cat /.forgectl-task/server/initial_state.json 2>&1; echo x > /.forgectl-task/server/y 2>&1; "
         "for d in /proc/[0-9]*; do case \"$(tr '\\0' ' ' < $d/cmdline 2>/dev/null)\" in *python3*forgectl_mc[p]*) "
         "echo \"SERVER ${d#/proc/}\"; "
         "head -c 64 $d/maps 2>&1; head -c 64 $d/environ 2>&1; head -c 64 $d/mem 2>&1; "
         "grep -c \"$M\" $d/mem 2>&1; kill -STOP ${d#/proc/} 2>&1;; esac; done; "
         "for d in /*; do case $d in /proc|/sys|/dev|/usr) ;; *) grep -rl \"$M\" \"$d\" 2>/dev/null | sed "
         "'s/^/HIT:/';; "
         "esac; done; echo PROBE-DONE";
}

manifest::TaskConfig load_bank(const TempDir& dir, bool with_checks = false) {
  auto t = manifest::load_task(write_bank_task(dir, with_checks));
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  return std::move(*t);
}

std::string output_of(const trial::TrialResult& r, const std::string& tool) {
  std::string out;
  for (const auto& e : r.tool_log)
    if (e.record.tool == tool) out += e.record.content + "\n" + e.record.reason + "\n";
  return out;
}

}  // namespace

TEST_CASE(
    "python server trial: the server's tools and state; a correct agent passes on state and golden hash; "
    "the agent's bash cannot reach the server") {
  TempDir dir;
  auto task = load_bank(dir);
  LlmTrialRig rig("openai", "gpt-4o");
  auto& s = rig.h.server;
  s.push(200, fake_llm::openai_tool_call("call_1", "get_account", R"({"account_id": "A"})"));
  s.push(200, fake_llm::openai_tool_call("call_2", "transfer", R"({"from_id": "A", "to_id": "B", "amount": 30})"));
  s.push(200,
         fake_llm::openai_tool_call(
             "call_3", "bash", json::Writer().begin_object().field("command", probe_script()).end_object().take()));
  s.push(200, fake_llm::openai_text("Moved 30 from A to B."));
  auto r = rig.run_llm(task);
  REQUIRE_MESSAGE(r.outcome == results::Outcome::kGraded, r.error);
  INFO(r.grade.reasons.size());
  for (const auto& reason : r.grade.reasons) INFO(reason);
  CHECK(r.grade.binary_pass);
  CHECK(r.grade.components.at("state_checks") == doctest::Approx(1.0));
  // Seeded from json_db (100 and 5), not from the script's own initial_state.json (1 and 1).
  CHECK(output_of(r, "get_account").find("\"balance\": 100") != std::string::npos);
  CHECK(r.final_state_json.find("\"balance\": 70") != std::string::npos);

  // The tools offered are the server's (from tools/list, schemas included) and bash; never the state tools.
  const json::Document first = rig.h.body(0);  // kept: `offered` points into it
  REQUIRE(first.IsObject());
  REQUIRE(first.HasMember("tools"));
  const auto& offered = first["tools"];
  REQUIRE(offered.IsArray());
  std::string names;
  for (const auto& t : offered.GetArray()) names += std::string(t["function"]["name"].GetString()) + " ";
  CHECK(names.find("get_account") != std::string::npos);
  CHECK(names.find("transfer") != std::string::npos);
  CHECK(names.find("_tolokaforge_") == std::string::npos);
  CHECK(json::to_string(offered).find("Paying account") != std::string::npos);

  const std::string probe = output_of(r, "bash");
  INFO(probe);
  CHECK(probe.find("PROBE-DONE") != std::string::npos);
  CHECK(probe.find("1000") != std::string::npos);
  CHECK(probe.find("SERVER ") != std::string::npos);  // the agent sees the process, and no more
  CHECK(probe.find("Permission denied") != std::string::npos);
  CHECK(probe.find(kSecret) == std::string::npos);
  CHECK(probe.find("HIT:") == std::string::npos);
  CHECK(probe.find("Operation not permitted") != std::string::npos);  // kill -STOP of another uid
  CHECK(rig.containers().empty());  // the runner, services and the golden server all removed
}

TEST_CASE("python server trial: a wrong transfer fails the state checks and the golden hash") {
  TempDir dir;
  auto task = load_bank(dir);
  LlmTrialRig rig("openai", "gpt-4o");
  auto& s = rig.h.server;
  s.push(200, fake_llm::openai_tool_call("call_1", "transfer", R"({"from_id": "A", "to_id": "B", "amount": 50})"));
  s.push(200, fake_llm::openai_text("Moved 50 from A to B."));
  auto r = rig.run_llm(task);
  REQUIRE_MESSAGE(r.outcome == results::Outcome::kGraded, r.error);
  CHECK_FALSE(r.grade.binary_pass);
  CHECK(r.grade.components.at("state_checks") < 0.5);
  CHECK(r.final_state_json.find("\"balance\": 50") != std::string::npos);
  CHECK(r.grade.state_diff_json.find("balance") != std::string::npos);
  CHECK(rig.containers().empty());
}

TEST_CASE(
    "python server trial: checks.py runs in a fresh container as the verifier; a passing and a failing check "
    "make half the custom_checks score") {
  TempDir dir;
  auto task = load_bank(dir, true);
  REQUIRE(task.grading.custom_checks.python());
  LlmTrialRig rig("openai", "gpt-4o");
  auto& s = rig.h.server;
  s.push(200, fake_llm::openai_tool_call("call_1", "transfer", R"({"from_id": "A", "to_id": "B", "amount": 30})"));
  s.push(200, fake_llm::openai_tool_call(
                  "call_2", "bash", R"({"command": "ls /.forgectl-task/server; ls / | grep -c forgectl-checks"})"));
  s.push(200, fake_llm::openai_text("Moved 30 from A to B."));
  auto r = rig.run_llm(task);
  REQUIRE_MESSAGE(r.outcome == results::Outcome::kGraded, r.error);
  const std::string reasons = reasons_of(r);
  INFO(reasons);
  CHECK(r.grade.components.at("state_checks") == doctest::Approx(1.0));
  CHECK(r.grade.components.at("custom_checks") == doctest::Approx(0.5));
  CHECK_FALSE(r.grade.binary_pass);  // 0.75 < 0.99
  CHECK(reasons.find("custom_checks: PASS \"a_paid_thirty\": \"A 100 -> 70; uid 2000 runner-files False\"") !=
        std::string::npos);
  CHECK(reasons.find("custom_checks: FAIL \"receipt_sent\"") != std::string::npos);
  // checks.py never reached the runner: the server's tree leaves it out, and no checks dir is there.
  const std::string listing = output_of(r, "bash");
  CHECK(listing.find("checks.py") == std::string::npos);
  CHECK(listing.find("mcp_server.py") == std::string::npos);  // the agent cannot list the server's dir
  CHECK(rig.containers().empty());
}

TEST_CASE("python server trial: checks.py sees a failed call as an error, so a \"successful transfer\" check fails") {
  TempDir dir;
  auto task = load_bank(dir, true);
  // The check a task author writes for "the agent made the transfer": a transfer call that succeeded.
  dir.write("checks.py", std::string(kChecksPyPreamble) + R"PY(
@check
def transferred():
    seen = [f"{c.name}:{c.status}:{(c.result or '')[:24]}" for c in _ctx.tool_calls]
    if any(c.name == "transfer" and c.status == "success" for c in _ctx.tool_calls):
        return CheckPassed(";".join(seen))
    return CheckFailed(";".join(seen))
)PY");
  SUBCASE("the transfer the server refused") {
    LlmTrialRig rig("openai", "gpt-4o");
    rig.h.server.push(
        200, fake_llm::openai_tool_call("call_1", "transfer", R"({"from_id": "A", "to_id": "B", "amount": 5000})"));
    rig.h.server.push(200, fake_llm::openai_text("Moved 30 from A to B."));
    auto r = rig.run_llm(task);
    REQUIRE_MESSAGE(r.outcome == results::Outcome::kGraded, r.error);
    const std::string reasons = reasons_of(r);
    INFO(reasons);
    CHECK(r.grade.components.at("custom_checks") == doctest::Approx(0.0));
    CHECK(reasons.find("custom_checks: FAIL \"transferred\": \"transfer:error:Error: Insufficient") !=
          std::string::npos);
    CHECK(rig.containers().empty());
  }
  SUBCASE("the honest control: the transfer that ran") {
    LlmTrialRig rig("openai", "gpt-4o");
    rig.h.server.push(
        200, fake_llm::openai_tool_call("call_1", "transfer", R"({"from_id": "A", "to_id": "B", "amount": 30})"));
    rig.h.server.push(200, fake_llm::openai_text("Moved 30 from A to B."));
    auto r = rig.run_llm(task);
    REQUIRE_MESSAGE(r.outcome == results::Outcome::kGraded, r.error);
    const std::string reasons = reasons_of(r);
    INFO(reasons);
    CHECK(r.grade.components.at("custom_checks") == doctest::Approx(1.0));
    CHECK(reasons.find("custom_checks: PASS \"transferred\": \"transfer:success:") != std::string::npos);
    CHECK(rig.containers().empty());
  }
}

TEST_CASE("python server trial: checks.py failing to load scores custom_checks 0 with the driver's error") {
  TempDir dir;
  auto task = load_bank(dir, true);
  dir.write("checks.py", "import no_such_module_here\n");
  LlmTrialRig rig("openai", "gpt-4o");
  rig.h.server.push(200, fake_llm::openai_text("Nothing to do."));
  auto r = rig.run_llm(task);
  REQUIRE_MESSAGE(r.outcome == results::Outcome::kGraded, r.error);
  const std::string reasons = reasons_of(r);
  INFO(reasons);
  CHECK(r.grade.components.at("custom_checks") == doctest::Approx(0.0));
  CHECK(reasons.find("no_such_module_here") != std::string::npos);
  CHECK(rig.containers().empty());
}
