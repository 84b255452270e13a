// OpenAI-compatible chat completions against the scripted server: request shapes, tool-call round
// trips, argument repair, usage and cost, provider defaults.
#include <doctest/doctest.h>

#include <cmath>

#include "agent/llm_arguments.h"
#include "agent/llm_openai.h"
#include "support/fake_llm_server.h"
#include "tools/arguments.h"

using namespace forge;
using namespace forge::agent;
using forge::test::LlmHarness;
using forge::test::ScriptedResponse;
namespace fl = forge::test::fake_llm;

namespace {

ChatMessage msg(ChatMessage::Role role, std::string content) {
  ChatMessage m;
  m.role = role;
  m.content = std::move(content);
  return m;
}

const ToolDecl kBash{"bash", "Run a shell command",
                     R"({"type":"object","properties":{"command":{"type":"string"}},"required":["command"]})"};

std::string str(const json::Value& v, const char* key) { return json::get_string(v, key); }

}  // namespace

TEST_CASE("llm openai: the request carries messages, tool calls, tool results, tools and sampling") {
  LlmHarness h;
  h.server.push(200, fl::openai_text("done"));
  auto m = h.model("openai", "gpt-4o-mini");
  m.temperature = 0.2;
  m.max_tokens = 256;
  m.seed = 7;
  auto client = h.client(m);

  ChatRequest req;
  req.messages.push_back(msg(ChatMessage::Role::kSystem, "You are terse."));
  req.messages.push_back(msg(ChatMessage::Role::kUser, "List /work"));
  ChatMessage call = msg(ChatMessage::Role::kAssistant, "");
  call.tool_calls.push_back(ToolCall{"call_1", "bash", R"({"command":"ls /work"})"});
  req.messages.push_back(call);
  ChatMessage result = msg(ChatMessage::Role::kTool, "a.txt\nb.txt");
  result.tool_call_id = "call_1";
  result.name = "bash";
  req.messages.push_back(result);
  req.tools.push_back(kBash);
  auto resp = client->chat(req);
  REQUIRE(resp);

  auto reqs = h.server.requests();
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].path == "/v1/chat/completions");
  CHECK(reqs[0].headers["authorization"] == std::string("Bearer ") + LlmHarness::kOpenAiKey);
  CHECK(reqs[0].body.find(LlmHarness::kOpenAiKey) == std::string::npos);

  auto b = h.body(0);
  CHECK(str(b, "model") == "gpt-4o-mini");
  const auto& msgs = b["messages"];
  REQUIRE(msgs.Size() == 4);
  CHECK(str(msgs[0], "role") == "system");
  CHECK(str(msgs[1], "content") == "List /work");
  CHECK(str(msgs[2], "role") == "assistant");
  CHECK(msgs[2]["content"].IsNull());
  const auto& tc = msgs[2]["tool_calls"][0];
  CHECK(str(tc, "id") == "call_1");
  CHECK(str(tc, "type") == "function");
  CHECK(str(tc["function"], "name") == "bash");
  CHECK(str(tc["function"], "arguments") == R"({"command":"ls /work"})");
  CHECK(str(msgs[3], "role") == "tool");
  CHECK(str(msgs[3], "tool_call_id") == "call_1");
  CHECK(str(msgs[3], "content") == "a.txt\nb.txt");

  const auto& tool = b["tools"][0];
  CHECK(str(tool, "type") == "function");
  CHECK(str(tool["function"], "name") == "bash");
  CHECK(tool["function"]["parameters"].IsObject());
  CHECK(str(tool["function"]["parameters"], "type") == "object");
  CHECK(str(b, "tool_choice") == "auto");
  CHECK(b["temperature"].GetDouble() == doctest::Approx(0.2));
  CHECK(json::get_int(b, "max_completion_tokens") == 256);  // OpenAI's own name for it
  CHECK_FALSE(b.HasMember("max_tokens"));
  CHECK(json::get_int(b, "seed") == 7);
}

TEST_CASE("llm openai: a tool call comes back, its result goes out, the answer follows") {
  LlmHarness h;
  h.server.push(200, fl::openai_tool_call("call_9", "bash", R"({"command":"cat a.txt"})", 1000, 50));
  h.server.push(200, fl::openai_text("The file says hello.", 1200, 10));
  auto client = h.client("openai", "gpt-4o-mini");

  ChatRequest req;
  req.messages.push_back(msg(ChatMessage::Role::kUser, "What does a.txt say?"));
  req.tools.push_back(kBash);
  auto first = client->chat(req);
  REQUIRE(first);
  CHECK(first->finish_reason == "tool_calls");
  CHECK(first->attempts == 1);
  REQUIRE(first->message.tool_calls.size() == 1);
  CHECK(first->message.tool_calls[0].id == "call_9");
  CHECK(first->message.tool_calls[0].name == "bash");
  CHECK(first->message.tool_calls[0].arguments == R"({"command":"cat a.txt"})");
  CHECK(first->usage.input_tokens == 1000);
  CHECK(first->usage.output_tokens == 50);
  REQUIRE(first->cost_usd);
  CHECK(*first->cost_usd == doctest::Approx(1000 * 0.15e-6 + 50 * 0.60e-6));  // gpt-4o-mini

  req.messages.push_back(first->message);
  ChatMessage result = msg(ChatMessage::Role::kTool, "hello");
  result.tool_call_id = "call_9";
  result.name = "bash";
  req.messages.push_back(result);
  auto second = client->chat(req);
  REQUIRE(second);
  CHECK(second->message.content == "The file says hello.");
  CHECK(second->finish_reason == "stop");
  CHECK(second->message.tool_calls.empty());

  auto b = h.body(1);
  REQUIRE(b["messages"].Size() == 3);
  CHECK(str(b["messages"][1]["tool_calls"][0], "id") == "call_9");
  CHECK(str(b["messages"][2], "tool_call_id") == "call_9");
  CHECK(str(b["messages"][2], "content") == "hello");
}

TEST_CASE("llm openai: malformed arguments are repaired when unambiguous, else kept raw for a tool error") {
  LlmHarness h;
  h.server.push(200, fl::openai_tool_call("c1", "bash", "{\"command\": \"ls\",}"));            // trailing comma
  h.server.push(200, fl::openai_tool_call("c2", "bash", "```json\n{'command': 'pwd'}\n```"));  // fence + quotes
  h.server.push(200, fl::openai_tool_call("c3", "bash", "{\"command\": \"ls\" \"-l\"}"));      // ambiguous
  h.server.push(200, fl::openai_text("ok"));
  auto client = h.client("openai", "gpt-4o");
  ChatRequest req;
  req.messages.push_back(msg(ChatMessage::Role::kUser, "go"));
  req.tools.push_back(kBash);

  auto r1 = client->chat(req);
  REQUIRE(r1);
  CHECK(r1->message.tool_calls[0].arguments == R"({"command":"ls"})");
  CHECK_FALSE(tools::canonical_arguments(r1->message.tool_calls[0].arguments).refused());
  auto r2 = client->chat(req);
  REQUIRE(r2);
  CHECK(r2->message.tool_calls[0].arguments == R"({"command":"pwd"})");
  auto r3 = client->chat(req);
  REQUIRE(r3);
  const std::string raw = "{\"command\": \"ls\" \"-l\"}";
  CHECK(r3->message.tool_calls[0].arguments == raw);  // exactly as the model wrote it
  auto refused = tools::canonical_arguments(r3->message.tool_calls[0].arguments);
  REQUIRE(refused.refused());
  CHECK(refused.refusal.starts_with("are not valid JSON: "));
  const std::string err = "Error: arguments for 'bash' " + refused.refusal;

  // The loop answers with the error; the provider gets {} for the bad call, the model the reason.
  req.messages.push_back(r3->message);
  ChatMessage result = msg(ChatMessage::Role::kTool, err);
  result.tool_call_id = "c3";
  req.messages.push_back(result);
  REQUIRE(client->chat(req));
  auto b = h.body(3);
  CHECK(str(b["messages"][1]["tool_calls"][0]["function"], "arguments") == "{}");
  CHECK(str(b["messages"][2], "content") == err);
}

TEST_CASE("llm openai: local servers get no key and no price; OpenRouter gets its key and the bare name") {
  LlmHarness h;
  h.server.push(200, fl::openai_text("hi", 100, 10));
  h.server.push(200, fl::openai_text("hi", 1000000, 0));
  auto m = h.model("vllm", "meta-llama/Llama-3.1-8B-Instruct");
  m.max_tokens = 64;
  auto local = h.client(m);
  ChatRequest req;
  req.messages.push_back(msg(ChatMessage::Role::kUser, "hi"));
  auto r = local->chat(req);
  REQUIRE(r);
  CHECK_FALSE(r->cost_usd);
  auto reqs = h.server.requests();
  CHECK(reqs[0].headers.count("authorization") == 0);
  CHECK(json::get_int(h.body(0), "max_tokens") == 64);

  auto router = h.client("openrouter", "openrouter/anthropic/claude-sonnet-4");
  CHECK(router->describe() == "openrouter/openrouter/anthropic/claude-sonnet-4");
  auto r2 = router->chat(req);
  REQUIRE(r2);
  CHECK(str(h.body(1), "model") == "anthropic/claude-sonnet-4");
  CHECK(h.server.requests()[1].headers["authorization"] == std::string("Bearer ") + LlmHarness::kOpenRouterKey);
  REQUIRE(r2->cost_usd);
  CHECK(*r2->cost_usd == doctest::Approx(3.0));  // a million input tokens at $3/M
}

TEST_CASE("llm openai: reasoning models get no temperature; reasoning effort in each dialect") {
  LlmHarness h;
  h.server.push(ScriptedResponse{200, {}, fl::openai_text("ok")}, 2);
  auto m = h.model("openai", "o3");
  m.top_p = 0.9;
  m.reasoning = "high";
  ChatRequest req;
  req.messages.push_back(msg(ChatMessage::Role::kUser, "hi"));
  REQUIRE(h.client(m)->chat(req));
  auto b = h.body(0);
  CHECK_FALSE(b.HasMember("temperature"));
  CHECK_FALSE(b.HasMember("top_p"));
  CHECK(str(b, "reasoning_effort") == "high");

  auto r = h.model("openrouter", "deepseek/deepseek-r1");
  r.reasoning = "low";
  REQUIRE(h.client(r)->chat(req));
  auto rb = h.body(1);
  CHECK(str(rb["reasoning"], "effort") == "low");
  CHECK_FALSE(rb.HasMember("reasoning_effort"));
  CHECK(rb.HasMember("temperature"));

  auto a = h.model("anthropic", "claude-sonnet-4");
  a.reasoning = "medium";
  auto refused = make_llm_client(a, h.ctx);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("'reasoning' is not supported") != std::string::npos);
}

TEST_CASE("llm openai: the factory refuses what it cannot use, without printing keys") {
  LlmHarness h;
  h.env.erase("OPENAI_API_KEY");
  auto missing = make_llm_client(h.model("openai", "gpt-4o"), h.ctx);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == Errc::kInvalid);
  CHECK(missing.error().message.find("OPENAI_API_KEY is not set") != std::string::npos);

  auto unknown = make_llm_client(h.model("bedrock", "x"), h.ctx);
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message.find("known: openai, anthropic") != std::string::npos);

  manifest::ModelConfig generic{.provider = "openai_compatible", .name = "m"};
  auto no_url = make_llm_client(generic, h.ctx);
  REQUIRE_FALSE(no_url);
  CHECK(no_url.error().message.find("needs a base_url") != std::string::npos);

  h.env["MY_GATEWAY_KEY"] = "gw-secret-0042";
  generic.base_url = h.server.base_url() + "/";
  generic.api_key_env = "MY_GATEWAY_KEY";
  h.server.push(200, fl::openai_text("ok"));
  ChatRequest req;
  req.messages.push_back(msg(ChatMessage::Role::kUser, "hi"));
  REQUIRE(h.client(generic)->chat(req));
  CHECK(h.server.requests()[0].headers["authorization"] == "Bearer gw-secret-0042");
  CHECK(h.server.requests()[0].path == "/v1/chat/completions");  // the trailing '/' was dropped
}
