// Anthropic Messages against the scripted server: system apart, tool_use / tool_result blocks,
// alternating turns, headers, defaults, usage and cost, errors.
#include <doctest/doctest.h>

#include "agent/llm_anthropic.h"
#include "support/fake_llm_server.h"

using namespace forge;
using namespace forge::agent;
using forge::test::LlmHarness;
namespace fl = forge::test::fake_llm;

namespace {

ChatMessage msg(ChatMessage::Role role, std::string content) {
  ChatMessage m;
  m.role = role;
  m.content = std::move(content);
  return m;
}

ChatMessage tool_result(std::string id, std::string content) {
  ChatMessage m = msg(ChatMessage::Role::kTool, std::move(content));
  m.tool_call_id = std::move(id);
  return m;
}

std::string str(const json::Value& v, const char* key) { return json::get_string(v, key); }

const ToolDecl kRead{"read_file", "Read a file",
                     R"({"type":"object","properties":{"path":{"type":"string"}},"required":["path"]})"};

}  // namespace

TEST_CASE("llm anthropic: system apart, tool_use and tool_result blocks, turns merged to alternate") {
  LlmHarness h;
  h.server.push(200, fl::anthropic_text("Both files are empty."));
  auto client = h.client("anthropic", "claude-sonnet-4-20250514");

  ChatRequest req;
  req.messages.push_back(msg(ChatMessage::Role::kSystem, "You are careful."));
  req.messages.push_back(msg(ChatMessage::Role::kUser, "Read a and b."));
  ChatMessage calls = msg(ChatMessage::Role::kAssistant, "Reading both.");
  calls.tool_calls.push_back(ToolCall{"toolu_1", "read_file", R"({"path":"a"})"});
  calls.tool_calls.push_back(ToolCall{"toolu_2", "read_file", R"({"path":"b"})"});
  req.messages.push_back(calls);
  req.messages.push_back(tool_result("toolu_1", ""));
  req.messages.push_back(tool_result("toolu_2", "(empty)"));
  req.tools.push_back(kRead);
  auto resp = client->chat(req);
  REQUIRE(resp);

  auto reqs = h.server.requests();
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].path == "/v1/messages");
  CHECK(reqs[0].headers["x-api-key"] == LlmHarness::kAnthropicKey);
  CHECK(reqs[0].headers["anthropic-version"] == "2023-06-01");
  CHECK(reqs[0].headers.count("authorization") == 0);
  CHECK(reqs[0].body.find(LlmHarness::kAnthropicKey) == std::string::npos);

  auto b = h.body(0);
  CHECK(str(b, "model") == "claude-sonnet-4-20250514");
  CHECK(json::get_int(b, "max_tokens") == 4096);  // required by the API: the default
  CHECK(str(b, "system") == "You are careful.");
  CHECK_FALSE(b.HasMember("seed"));
  const auto& msgs = b["messages"];
  REQUIRE(msgs.Size() == 3);  // user, assistant, user (both results in one turn)
  CHECK(str(msgs[0], "role") == "user");
  CHECK(str(msgs[0]["content"][0], "text") == "Read a and b.");
  const auto& asst = msgs[1]["content"];
  CHECK(str(msgs[1], "role") == "assistant");
  REQUIRE(asst.Size() == 3);
  CHECK(str(asst[0], "type") == "text");
  CHECK(str(asst[1], "type") == "tool_use");
  CHECK(str(asst[1], "id") == "toolu_1");
  CHECK(str(asst[1], "name") == "read_file");
  CHECK(str(asst[1]["input"], "path") == "a");
  CHECK(str(asst[2]["input"], "path") == "b");
  const auto& results = msgs[2]["content"];
  CHECK(str(msgs[2], "role") == "user");
  REQUIRE(results.Size() == 2);
  CHECK(str(results[0], "type") == "tool_result");
  CHECK(str(results[0], "tool_use_id") == "toolu_1");
  CHECK(str(results[1], "content") == "(empty)");

  const auto& tool = b["tools"][0];
  CHECK(str(tool, "name") == "read_file");
  CHECK(str(tool["input_schema"], "type") == "object");
  CHECK(str(b["tool_choice"], "type") == "auto");
}

TEST_CASE("llm anthropic: a tool_use comes back as a tool call, its result goes out, usage and cost") {
  LlmHarness h;
  h.server.push(200, fl::anthropic_tool_use("toolu_7", "read_file", R"({"path":"notes.md"})", "Let me look.", 2000, 100));
  h.server.push(200, fl::anthropic_text("It lists three tasks.", 2100, 20));
  auto m = h.model("anthropic", "claude-sonnet-4-20250514");
  m.max_tokens = 1000;
  m.seed = 3;
  auto client = h.client(m);

  ChatRequest req;
  req.messages.push_back(msg(ChatMessage::Role::kUser, "What is in notes.md?"));
  req.tools.push_back(kRead);
  auto first = client->chat(req);
  REQUIRE(first);
  CHECK(first->finish_reason == "tool_calls");
  CHECK(first->message.content == "Let me look.");
  REQUIRE(first->message.tool_calls.size() == 1);
  CHECK(first->message.tool_calls[0].id == "toolu_7");
  CHECK(first->message.tool_calls[0].arguments == R"({"path":"notes.md"})");
  CHECK(first->usage.input_tokens == 2000);
  CHECK(first->usage.output_tokens == 100);
  REQUIRE(first->cost_usd);
  CHECK(*first->cost_usd == doctest::Approx(2000 * 3e-6 + 100 * 15e-6));  // claude-sonnet-4

  req.messages.push_back(first->message);
  req.messages.push_back(tool_result("toolu_7", "- a\n- b\n- c"));
  auto second = client->chat(req);
  REQUIRE(second);
  CHECK(second->finish_reason == "stop");
  CHECK(second->message.content == "It lists three tasks.");

  auto b = h.body(1);
  CHECK(json::get_int(b, "max_tokens") == 1000);
  CHECK_FALSE(b.HasMember("seed"));  // not in this API
  REQUIRE(b["messages"].Size() == 3);
  CHECK(str(b["messages"][1]["content"][1], "id") == "toolu_7");
  CHECK(str(b["messages"][2]["content"][0], "tool_use_id") == "toolu_7");
  CHECK(str(b["messages"][2]["content"][0], "content") == "- a\n- b\n- c");
}

TEST_CASE("llm anthropic: prompt too long is a model outcome at once; overloaded (529) is retried") {
  LlmHarness h;
  h.server.push(400, fl::anthropic_error("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"));
  h.server.push(529, fl::anthropic_error("overloaded_error", "Overloaded"));
  h.server.push(200, fl::anthropic_text("fine"));
  auto client = h.client("anthropic", "claude-3-5-haiku-latest");
  ChatRequest req;
  req.messages.push_back(msg(ChatMessage::Role::kUser, "hi"));

  auto too_long = client->chat(req);
  REQUIRE_FALSE(too_long);
  CHECK(too_long.error().code == Errc::kInvalid);
  CHECK(too_long.error().message.find("exceeds the model's context length") != std::string::npos);
  CHECK(h.server.requests().size() == 1);
  CHECK(h.sleeps.empty());

  auto ok = client->chat(req);
  REQUIRE(ok);
  CHECK(ok->attempts == 2);
  CHECK(ok->message.content == "fine");
  REQUIRE(ok->cost_usd);  // claude-3-5-haiku-latest is priced as claude-3-5-haiku
  CHECK(*ok->cost_usd == doctest::Approx(12 * 0.8e-6 + 3 * 4e-6));
}

TEST_CASE("llm anthropic: mid-conversation system notes become user text; empty messages are left out") {
  ResolvedModel m;
  m.config.provider = "anthropic";
  m.wire_name = "claude-sonnet-4";
  ChatRequest req;
  req.messages.push_back(msg(ChatMessage::Role::kUser, "start"));
  req.messages.push_back(msg(ChatMessage::Role::kAssistant, ""));
  req.messages.push_back(msg(ChatMessage::Role::kSystem, "You seem stuck."));
  auto body = anthropic_request_body(m, req);
  REQUIRE(body);
  json::Document b;
  b.Parse(body->c_str());
  CHECK_FALSE(b.HasMember("system"));
  REQUIRE(b["messages"].Size() == 1);
  REQUIRE(b["messages"][0]["content"].Size() == 2);
  CHECK(str(b["messages"][0]["content"][1], "text") == "You seem stuck.");

  req.tools.push_back(ToolDecl{"broken", "", "{not json"});
  auto bad = anthropic_request_body(m, req);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("tool 'broken'") != std::string::npos);
}
