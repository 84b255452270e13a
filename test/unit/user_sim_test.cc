// The scripted user without Docker: which rule answers, and a rule's own tool calls made through
// the executor as the user (dual control), refused when the task did not enable them.
#include <doctest/doctest.h>

#include "agent/user_sim.h"
#include "tools/calculator.h"
#include "tools/executor.h"

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
  // Without an executor at all, a rule with calls is an error rather than a silent skip.
  auto none = scripted_user(flow())->reply(said("add them"), Deadline::in(Millis(5000)));
  CHECK_FALSE(none.has_value());
}
