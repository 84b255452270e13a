// The scripted user without Docker: which rule answers, and a rule's own tool calls made through
// the executor as the user (dual control), refused when the task did not enable them; and what
// preflight refuses of them and of a task's stack.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agent/user_sim.h"
#include "manifest/task_parse.h"
#include "tools/calculator.h"
#include "tools/executor.h"
#include "trial/preflight.h"

using namespace forge;
using namespace forge::agent;

namespace {

manifest::UserSimulatorConfig flow() {
  manifest::UserSimulatorConfig u;
  u.mode = manifest::UserSimulatorConfig::Mode::kScripted;
  manifest::ScriptedRule act;
  act.if_assistant_contains = "add them";
  act.user = "I added them. ###STOP###";
  act.tool_calls = {{"calculator", R"({"expression":"17 + 25"})"}, {"calculator", R"({"expression":"1/0"})"}};
  manifest::ScriptedRule dflt;
  dflt.is_default = true;
  dflt.user = "What should I do?";
  u.scripted_flow = {act, dflt};
  return u;
}

std::vector<ChatMessage> said(const std::string& assistant) {
  return {{ChatMessage::Role::kUser, "Hi"}, {ChatMessage::Role::kAssistant, assistant}};
}

std::unique_ptr<tools::ToolExecutor> executor(std::vector<std::string> user_enabled, std::vector<tools::CallRecord>& log) {
  tools::ExecutorConfig c;
  c.tools = {std::make_shared<tools::Calculator>()};
  c.user_enabled = std::move(user_enabled);
  c.on_record = [&log](const tools::CallRecord& r) { log.push_back(r); };
  auto ex = tools::ToolExecutor::create(c);
  REQUIRE_MESSAGE(ex.has_value(), (ex ? "" : ex.error().what()));
  return std::move(*ex);
}

}  // namespace

TEST_CASE("scripted user: a matching rule makes its tool calls as the user, in order, before its reply") {
  std::vector<tools::CallRecord> log;
  auto ex = executor({"calculator"}, log);
  auto user = scripted_user(flow(), ex.get());
  auto r = user->reply(said("Please add them up."), Deadline::in(Millis(5000)));
  REQUIRE(r.has_value());
  CHECK(r->text == "I added them. ###STOP###");
  CHECK(r->stop);
  REQUIRE(log.size() == 2);
  CHECK(log[0].actor == tools::Actor::kUser);
  CHECK(log[0].tool == "calculator");
  CHECK(log[0].content == "42");
  CHECK(log[1].content == "Error: division by zero");  // a failed call is the user's to see, not a crash
  REQUIRE(r->tool_turns.size() == 3);                  // the calls, then one result each
  CHECK(r->tool_turns[0].tool_calls.size() == 2);
  CHECK(r->tool_turns[1].content == "42");
  CHECK(r->tool_turns[1].tool_call_id == r->tool_turns[0].tool_calls[0].id);
  // Each result says whether its call failed (checks.py sees it as the call's status).
  CHECK_FALSE(r->tool_turns[1].tool_error);
  CHECK(r->tool_turns[2].tool_error);

  // Another message: the default answers, and makes no call.
  auto d = user->reply(said("Hello!"), Deadline::in(Millis(5000)));
  REQUIRE(d.has_value());
  CHECK(d->text == "What should I do?");
  CHECK(log.size() == 2);
}

TEST_CASE("scripted user: a call of a tool the user was not given is refused by the executor") {
  std::vector<tools::CallRecord> log;
  auto ex = executor({}, log);
  auto r = scripted_user(flow(), ex.get())->reply(said("add them"), Deadline::in(Millis(5000)));
  REQUIRE(r.has_value());
  REQUIRE(log.size() == 2);
  CHECK(log[0].content == "Error: tool 'calculator' is not enabled for the user");
  REQUIRE(r->tool_turns.size() == 3);
  CHECK(r->tool_turns[1].tool_error);  // refused, not a success
  // Without an executor at all, a rule with calls is an error rather than a silent skip.
  auto none = scripted_user(flow())->reply(said("add them"), Deadline::in(Millis(5000)));
  CHECK_FALSE(none.has_value());
}

// Preflight of the scripted user's calls and of the stack plan: what `forgectl validate` and
// `run` refuse before any trial.

namespace {

std::string preflight_of(const std::string& task_yaml, const std::string& compose = "") {
  auto dir = std::filesystem::temp_directory_path() / ("forgectl-pf-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "task.yaml") << task_yaml;
  std::ofstream(dir / "grading.yaml") << "transcript_rules: {must_contain: [done]}\n";
  if (!compose.empty()) std::ofstream(dir / "compose.yaml") << compose;
  auto t = manifest::load_task((dir / "task.yaml").string());
  std::filesystem::remove_all(dir);
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  std::string out;
  for (const auto& p : trial::check_task(*t, {})) out += p.message + "\n";
  return out;
}

const std::string kHead = "task_id: t\nname: t\ncategory: t\ndescription: t\ngrading: grading.yaml\n";

}  // namespace

TEST_CASE("preflight: a scripted user may call only the tools tools.user.enabled gives it") {
  const std::string flow = "user_simulator:\n  mode: scripted\n  scripted_flow:\n"
                           "    - {default: \"ok ###STOP###\", tool_calls: [{name: read_file}, {name: bash}]}\n";
  std::string out = preflight_of(kHead + "environment: {stack: none}\n"
                                         "tools: {agent: {enabled: [read_file]}, user: {enabled: [read_file]}}\n" + flow);
  CHECK(out == "user_simulator.scripted_flow[0] calls 'bash', which tools.user.enabled does not list\n");
}

TEST_CASE("preflight: the stack is planned, so an upstream nobody could reach is refused before any trial") {
  const std::string compose = "services:\n  idx:\n    image: x\n    x-forgectl: {upstream: true}\n";
  std::string out = preflight_of(kHead + "environment:\n  network_policy: limited_internet\n"
                                         "  limited_internet_allowlist: [pypi.org]\n  compose_file: compose.yaml\n",
                                 compose);
  CHECK(out.find("upstream 'idx': none of its names (idx) is on limited_internet_allowlist") != std::string::npos);
  CHECK(preflight_of(kHead + "environment:\n  network_policy: limited_internet\n"
                             "  limited_internet_allowlist: [idx]\n  compose_file: compose.yaml\n",
                     compose) == "");
}
