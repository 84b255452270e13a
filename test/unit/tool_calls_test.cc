// What a model sends, taken in once: duplicate keys refused everywhere JSON is parsed, tool
// arguments in one canonical form (bounded, with an excerpt when refused), forgectl's own call
// ids, and the provider's kept only for the round trip.
#include <doctest/doctest.h>

#include <memory>

#include "agent/episode.h"
#include "agent/tool_calls.h"
#include "core/json.h"
#include "core/limits.h"
#include "core/strings.h"
#include "support/deep_json.h"
#include "support/fake_llm_server.h"
#include "tools/arguments.h"
#include "tools/executor.h"
#include "trial/checks_run.h"

using namespace forge;
using forge::test::LlmHarness;
namespace fl = forge::test::fake_llm;

namespace {

constexpr const char* kLoanSchema =
    R"({"type":"object","properties":{"member_id":{"type":"string"},"book_id":{"type":"string"}},)"
    R"("required":["member_id","book_id"],"additionalProperties":false})";

// Records what it was given, and answers with it.
class RecordingTool : public tools::Tool {
 public:
  explicit RecordingTool(std::string name) : spec_{std::move(name), "records", kLoanSchema} {}
  const tools::ToolSpec& spec() const override { return spec_; }
  Result<std::string> call(const json::Value& args, const tools::CallContext&) override {
    given.push_back(json::to_string(args));
    return "renewed " + json::get_string(args, "book_id");
  }
  std::vector<std::string> given;

 private:
  tools::ToolSpec spec_;
};

struct Executor {
  std::shared_ptr<RecordingTool> tool = std::make_shared<RecordingTool>("renew_loan");
  std::vector<tools::CallRecord> records;
  std::unique_ptr<tools::ToolExecutor> ex;
  Executor() {
    tools::ExecutorConfig c;
    c.tools = {tool};
    c.agent_enabled = {"renew_loan"};
    c.on_record = [this](const tools::CallRecord& r) { records.push_back(r); };
    auto made = tools::ToolExecutor::create(std::move(c));
    REQUIRE(made.has_value());
    ex = std::move(*made);
  }
};

}  // namespace

TEST_CASE("json: a key given twice anywhere is refused, naming the key and the object") {
  json::Document d;
  auto top = json::parse_document(d, R"({"member_id":"M-7","book_id":"B-2","book_id":"B-3"})");
  REQUIRE(top);
  CHECK(top->why == json::ParseFailure::Why::kDuplicateKey);
  CHECK(top->reason == R"(the key "book_id" twice in the top-level object)");
  CHECK(d.IsNull());
  auto deep = json::parse_document(d, R"({"items":[{"id":1},{"a/b":{"x":1,"y":2,"x":3}}]})");
  REQUIRE(deep);
  CHECK(deep->reason == R"(the key "x" twice in the object at /items/1/a~1b)");
  auto r = json::parse(R"([{"k":1,"k":1}])", "reward.json");
  REQUIRE_FALSE(r);
  CHECK(r.error().message == R"(reward.json has the key "k" twice in the object at /0)");
  // The same key in different objects, and keys differing only after a NUL, are fine.
  CHECK_FALSE(json::parse_document(d, R"({"a":{"k":1},"b":{"k":2},"k":3})"));
  CHECK_FALSE(json::parse_document(d, R"({"a\u0000x":1,"a\u0000y":2})"));
  // Objects of many keys are checked by sorting, not pairwise.
  std::string many = "{";
  for (int i = 0; i < 20000; ++i) many += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
  CHECK_FALSE(json::parse_document(d, many + "}"));
  CHECK(json::parse_document(d, many + ",\"k19999\":1}"));
}

TEST_CASE("canonical arguments: one compact form, idempotent, blank is {}") {
  auto a = tools::canonical_arguments(" {\"member_id\" : \"M-7\",\n \"book_id\":\"B\\u0032\", \"n\": 1.50} ");
  CHECK_FALSE(a.refused());
  CHECK(a.text == R"({"member_id":"M-7","book_id":"B2","n":1.5})");
  CHECK(tools::canonical_arguments(a.text).text == a.text);
  CHECK(tools::canonical_arguments("").text == "{}");
  CHECK(tools::canonical_arguments(" \n").text == "{}");
}

TEST_CASE("canonical arguments: a duplicate key is refused, the key named, the text kept whole when small") {
  const std::string sent = R"({"member_id":"M-7","book_id":"B-2","book_id":"B-3"})";
  auto a = tools::canonical_arguments(sent);
  REQUIRE(a.refused());
  CHECK(a.refusal == R"(are refused: the key "book_id" twice in the top-level object; send each key once)");
  CHECK(a.text == sent);

  Executor e;
  auto o = e.ex->call(tools::Actor::kAgent, "renew_loan", sent);
  CHECK(o.kind == tools::ToolOutcome::Kind::kRefused);
  CHECK(o.content == R"(Error: arguments for 'renew_loan' are refused: the key "book_id" twice in the top-level )"
                     "object; send each key once");
  CHECK(e.tool->given.empty());  // never ran, with either value
  // The honest control: the same call without the second key runs, on the canonical document.
  o = e.ex->call(tools::Actor::kAgent, "renew_loan", R"({ "member_id": "M-7", "book_id": "B-2" })");
  CHECK(o.content == "renewed B-2");
  REQUIRE(e.tool->given.size() == 1);
  CHECK(e.tool->given[0] == R"({"member_id":"M-7","book_id":"B-2"})");
  REQUIRE(e.records.size() == 2);
  CHECK(e.records[1].arguments == R"({"member_id":"M-7","book_id":"B-2"})");
}

TEST_CASE("canonical arguments: nested 100,000 and 1,000,000 deep, as arrays and objects, are kept as an excerpt") {
  for (std::size_t n : {std::size_t{100000}, std::size_t{1000000}}) {
    // The array sits in the arguments' object: one level more.
    for (const auto& [sent, depth] :
         {std::pair{test::nested_array_arguments(n, "member_id"), n + 1}, std::pair{test::nested_objects(n), n}}) {
      CAPTURE(n);
      auto a = tools::canonical_arguments(sent);
      REQUIRE(a.refused());
      if (sent.size() <= limits::kMaxToolArgumentsBytes)
        CHECK(a.refusal == "are refused: nested " + std::to_string(depth) +
                               " levels deep, deeper than the limit of 64 levels (" + std::to_string(sent.size()) +
                               " bytes)");
      else
        CHECK(a.refusal == "are refused: " + std::to_string(sent.size()) +
                               " bytes, more than the limit of 4194304 bytes (nested " + std::to_string(depth) +
                               " levels deep)");
      CHECK(a.text.size() < limits::kMaxRefusedArgumentsExcerpt + 40);
      CHECK(a.text.substr(0, 20) == sent.substr(0, 20));
      CHECK(a.text.find("… [" + std::to_string(sent.size()) + " bytes in all]") != std::string::npos);
    }
  }
  // At the limit and one past it.
  auto at = tools::canonical_arguments(test::nested_objects(limits::kMaxModelJsonDepth));
  CHECK_FALSE(at.refused());
  const std::string past = test::nested_objects(limits::kMaxModelJsonDepth + 1);
  CHECK(tools::canonical_arguments(past).refusal ==
        "are refused: nested 65 levels deep, deeper than the limit of 64 levels (" + std::to_string(past.size()) +
            " bytes)");
}

TEST_CASE("canonical arguments: a 50 MB string is refused before any parse, its excerpt valid UTF-8") {
  std::string sent = R"({"member_id":")" + std::string(50 << 20, 'a') + "\xc3\xa9\"}";
  sent.replace(limits::kMaxRefusedArgumentsExcerpt - 1, 2, "\xc3\xa9");  // a character across the cut
  auto a = tools::canonical_arguments(sent);
  REQUIRE(a.refused());
  CHECK(a.refusal == "are refused: " + std::to_string(sent.size()) +
                         " bytes, more than the limit of 4194304 bytes (nested 1 level deep)");
  CHECK(a.text.size() <= limits::kMaxRefusedArgumentsExcerpt + 40);
  CHECK(a.text.find("\xc3\xa9") == std::string::npos);  // cut before the character, not through it
  CHECK(invalid_utf8(a.text) == std::string_view::npos);
}

TEST_CASE("call intake: forgectl's own ids; the provider's kept unless missing or used before") {
  agent::CallIntake intake;
  ChatMessage m{ChatMessage::Role::kAssistant, ""};
  m.tool_calls = {{"call_1", "renew_loan", R"({"member_id":"M-7", "book_id":"B-2"})"},
                  {"call_1", "renew_loan", R"({"member_id":"M-7"})"},
                  {"", "renew_loan", R"({"a":1,"a":2})"}};
  intake.take(m);
  CHECK(m.tool_calls[0].id == "fc-1");
  CHECK(m.tool_calls[0].provider_id == "call_1");
  CHECK(m.tool_calls[0].arguments == R"({"member_id":"M-7","book_id":"B-2"})");
  CHECK(m.tool_calls[1].id == "fc-2");
  CHECK(m.tool_calls[1].provider_id == "fc-2");  // the model's id was taken already
  CHECK(m.tool_calls[2].id == "fc-3");
  CHECK(m.tool_calls[2].provider_id == "fc-3");  // the model gave none
  CHECK(m.tool_calls[2].refusal == R"(are refused: the key "a" twice in the top-level object; send each key once)");
  ChatMessage next{ChatMessage::Role::kAssistant, ""};
  next.tool_calls = {{"call_1", "renew_loan", "{}"}, {"call_9", "x" + std::string(300, 'y'), "{}"}};
  intake.take(next);
  CHECK(next.tool_calls[0].id == "fc-4");
  CHECK(next.tool_calls[0].provider_id == "fc-4");  // used in an earlier turn: providers want ids unique
  CHECK(next.tool_calls[1].provider_id == "call_9");
  CHECK(next.tool_calls[1].name.size() <= limits::kMaxToolNameBytes + 3);

  agent::CallIntake step2("s2-");
  ChatMessage s{ChatMessage::Role::kAssistant, ""};
  s.tool_calls = {{"call_1", "renew_loan", "{}"}};
  step2.take(s);
  CHECK(s.tool_calls[0].id == "s2-fc-1");
}

namespace {

// An assistant that plays the turns it was given.
class Scripted : public agent::Agent {
 public:
  explicit Scripted(std::vector<ChatMessage> turns) : turns_(std::move(turns)) {}
  std::string kind() const override { return "scripted"; }
  Result<ChatResponse> next(const std::vector<ChatMessage>&, const std::vector<ToolDecl>&, Deadline) override {
    ChatResponse r;
    r.cost_usd = 0.0;
    r.message = next_ < turns_.size() ? turns_[next_++] : ChatMessage{ChatMessage::Role::kAssistant, "done"};
    return r;
  }

 private:
  std::vector<ChatMessage> turns_;
  std::size_t next_ = 0;
};

}  // namespace

TEST_CASE("episode: two calls of one turn with the same id are answered and graded each on what ran") {
  Executor e;
  ChatMessage turn{ChatMessage::Role::kAssistant, ""};
  // The first succeeds; the second, under the same id, is refused (no book_id).
  turn.tool_calls = {{"call_1", "renew_loan", R"({"member_id":"M-7","book_id":"B-2"})"},
                     {"call_1", "renew_loan", R"({"member_id":"M-7"})"}};
  Scripted agent({turn});
  agent::EpisodeSpec spec;
  spec.max_turns = 3;
  auto ep = agent::run_episode(agent, nullptr, *e.ex, spec);
  REQUIRE(ep.messages.size() == 4);  // the turn, two results, "done"
  CHECK(ep.messages[1].tool_call_id == "fc-1");
  CHECK_FALSE(ep.messages[1].tool_error);
  CHECK(ep.messages[2].tool_call_id == "fc-2");
  CHECK(ep.messages[2].tool_error);

  json::Document d;
  REQUIRE_FALSE(json::parse_document(d, trial::checks_transcript_json(ep.messages)));
  const auto& calls = d["messages"][0]["tool_calls"];
  REQUIRE(calls.Size() == 2);
  CHECK(json::get_string(calls[0], "id") == "fc-1");
  CHECK(json::get_string(calls[0], "status") == "success");
  CHECK(json::get_string(calls[0], "result") == "renewed B-2");
  CHECK(json::get_string(calls[1], "id") == "fc-2");
  CHECK(json::get_string(calls[1], "status") == "error");  // the failed call is not given the first's answer
}

TEST_CASE("episode over a provider: the model's duplicate and missing ids go back unique and answered") {
  LlmHarness h;
  h.server.push(200, fl::openai_message("",
                                        {{"call_1", "renew_loan", R"({"member_id":"M-7","book_id":"B-2"})"},
                                         {"call_1", "renew_loan", R"({"member_id":"M-7","book_id":"B-3"})"},
                                         {"", "renew_loan", R"({"member_id":"M-7","book_id":"B-4"})"}},
                                        "tool_calls", 10, 5));
  h.server.push(200, fl::openai_text("done"));
  std::shared_ptr<agent::LlmClient> client = h.client("openai", "gpt-4o");
  auto model = agent::llm_agent(client);
  Executor e;
  agent::EpisodeSpec spec;
  spec.max_turns = 3;
  auto ep = agent::run_episode(*model, nullptr, *e.ex, spec);
  REQUIRE(ep.messages.size() == 5);
  CHECK(ep.messages[0].tool_calls[2].provider_id == "call_3");  // the client's stand-in for a missing id
  auto second = h.body(1);
  const auto& msgs = second["messages"];
  REQUIRE(msgs.Size() == 4);
  const auto& calls = msgs[0]["tool_calls"];
  REQUIRE(calls.Size() == 3);
  CHECK(json::get_string(calls[0], "id") == "call_1");
  CHECK(json::get_string(calls[1], "id") == "fc-2");  // no longer the first call's id
  CHECK(json::get_string(calls[2], "id") == "call_3");
  CHECK(json::get_string(msgs[1], "tool_call_id") == "call_1");
  CHECK(json::get_string(msgs[2], "tool_call_id") == "fc-2");
  CHECK(json::get_string(msgs[3], "tool_call_id") == "call_3");
  CHECK(json::get_string(msgs[2], "content") == "renewed B-3");
}
