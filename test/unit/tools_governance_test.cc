// Tool governance without Docker: every refusal with its exact message, timeouts, caps, redaction.
#include <doctest/doctest.h>

#include <functional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/strings.h"
#include "tools/builtin_tools.h"
#include "tools/executor.h"
#include "tools/rate_limit.h"
#include "tools/redact.h"
#include "tools/schema.h"

using namespace forge;
using namespace forge::tools;

namespace {

constexpr const char* kReadFileSchema =
    R"({"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer","minimum":1},)"
    R"("mode":{"enum":["text","hex"]},"opts":{"type":"object","properties":{"depth":{"type":"integer"}},)"
    R"("required":["depth"],"additionalProperties":false}},"required":["path"],"additionalProperties":false})";
constexpr const char* kCommandSchema =
    R"({"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false})";
constexpr const char* kAnySchema = R"({"type":"object","properties":{"payload":{}},"additionalProperties":false})";

using Action = std::function<Result<std::string>(const json::Value&, const CallContext&)>;

// Records how often it ran and what it was given; does whatever `action` says.
class FakeTool : public Tool {
 public:
  FakeTool(std::string name, std::string schema, Action action)
      : spec_{std::move(name), "a fake", std::move(schema)}, action_(std::move(action)) {}
  const ToolSpec& spec() const override { return spec_; }
  Result<std::string> call(const json::Value& args, const CallContext& ctx) override {
    ++calls;
    last_args = json::to_string(args);
    return action_(args, ctx);
  }
  int calls = 0;
  std::string last_args;

 private:
  ToolSpec spec_;
  Action action_;
};

Action returns(std::string text) {
  return [text](const json::Value&, const CallContext&) -> Result<std::string> { return text; };
}

Action echoes() {
  return [](const json::Value& args, const CallContext&) -> Result<std::string> { return json::to_string(args); };
}

struct Harness {
  std::shared_ptr<FakeTool> bash = std::make_shared<FakeTool>("bash", kCommandSchema, returns("ran"));
  std::shared_ptr<FakeTool> read_file = std::make_shared<FakeTool>("read_file", kReadFileSchema, returns("contents"));
  std::vector<CallRecord> records;
  std::ostringstream log_text;
  Logger log{log_text, LogLevel::kDebug};
  Clock::time_point now = Clock::time_point{} + std::chrono::hours(1);

  ExecutorConfig config() {
    ExecutorConfig c;
    c.tools = {bash, read_file};
    c.agent_enabled = {"bash", "read_file"};
    c.user_enabled = {"read_file"};
    c.log = &log;
    c.on_record = [this](const CallRecord& r) { records.push_back(r); };
    c.now = [this] { return now; };
    return c;
  }

  std::unique_ptr<ToolExecutor> make(ExecutorConfig c) {
    auto ex = ToolExecutor::create(std::move(c));
    REQUIRE_MESSAGE(ex.has_value(), (ex ? "" : ex.error().what()));
    return std::move(*ex);
  }
  std::unique_ptr<ToolExecutor> make() { return make(config()); }
};

std::string invalid(std::string_view schema, std::string_view args) {
  auto s = CompiledSchema::compile(schema, "t");
  REQUIRE(s.has_value());
  auto doc = json::parse(args, "args");
  REQUIRE(doc.has_value());
  Status st = s->validate(*doc);
  REQUIRE_FALSE(st.has_value());
  CHECK(st.error().code == Errc::kInvalid);
  return st.error().message;
}

}  // namespace

TEST_CASE("a valid call reaches the tool and its output is what the model receives") {
  Harness h;
  auto ex = h.make();
  ToolOutcome o = ex->call(Actor::kAgent, "read_file", R"({"path":"notes.txt","limit":5})");
  CHECK(o.kind == ToolOutcome::Kind::kOk);
  CHECK(o.content == "contents");
  CHECK(o.reason.empty());
  CHECK_FALSE(o.truncated);
  CHECK(h.read_file->calls == 1);
  CHECK(h.read_file->last_args == R"({"path":"notes.txt","limit":5})");
  CHECK(ex->stats().at("read_file").ok == 1);
  REQUIRE(h.records.size() == 1);
  CHECK(h.records[0].tool == "read_file");
  CHECK(h.records[0].outcome == ToolOutcome::Kind::kOk);
  CHECK(h.records[0].arguments == R"({"path":"notes.txt","limit":5})");
  CHECK(ex->specs(Actor::kUser).size() == 1);
  CHECK(ex->specs(Actor::kAgent)[0].name == "bash");
}

TEST_CASE("each refusal comes back as an Error: message, is counted, and never reaches the tool") {
  Harness h;
  auto ex = h.make();
  auto refused = [&](Actor a, std::string_view name, std::string_view args) {
    ToolOutcome o = ex->call(a, name, args);
    CHECK(o.kind == ToolOutcome::Kind::kRefused);
    CHECK(o.content == "Error: " + o.reason);
    return o.content;
  };

  CHECK(refused(Actor::kAgent, "grep", "{}") == "Error: unknown tool 'grep' (available: bash, read_file)");
  CHECK(refused(Actor::kUser, "grep", "{}") == "Error: unknown tool 'grep' (available: read_file)");
  CHECK(refused(Actor::kUser, "bash", R"({"command":"ls"})") == "Error: tool 'bash' is not enabled for the user");
  CHECK(refused(Actor::kAgent, "read_file", R"({path: "a"})") ==
        "Error: arguments for 'read_file' are not valid JSON: missing a name for object member at offset 1");
  CHECK(refused(Actor::kAgent, "read_file", R"({"path":"a","foo":1})") ==
        "Error: invalid arguments for 'read_file': unexpected property 'foo'");
  CHECK(refused(Actor::kAgent, "read_file", R"({"limit":3})") ==
        "Error: invalid arguments for 'read_file': missing required property 'path'");
  CHECK(refused(Actor::kAgent, "read_file", R"({"path":"a","limit":"10"})") ==
        "Error: invalid arguments for 'read_file': property 'limit' must be integer, got string");
  CHECK(refused(Actor::kAgent, "read_file", "[1]") ==
        "Error: invalid arguments for 'read_file': arguments must be a JSON object");
  CHECK(refused(Actor::kAgent, "read_file", R"("x")") ==
        "Error: invalid arguments for 'read_file': arguments must be a JSON object");
  // "" means no arguments, which here lacks the required path.
  CHECK(refused(Actor::kAgent, "read_file", "") ==
        "Error: invalid arguments for 'read_file': missing required property 'path'");

  CHECK(h.read_file->calls == 0);
  CHECK(h.bash->calls == 0);
  CHECK(ex->stats().at("read_file").refused == 7);
  CHECK(ex->stats().at("bash").refused == 1);
  CHECK(ex->totals().calls == 10);  // unknown names count in the totals only
  CHECK(ex->totals().refused == 10);
  CHECK(h.records.size() == 10);
  CHECK(h.log_text.str().find("refused") != std::string::npos);
}

TEST_CASE("schema messages name the property and the rule") {
  CHECK(invalid(kReadFileSchema, R"({"path":"a","limit":0})") == "property 'limit' must be >= 1");
  CHECK(invalid(kReadFileSchema, R"({"path":"a","limit":1.5})") == "property 'limit' must be integer, got number");
  CHECK(invalid(kReadFileSchema, R"({"path":"a","mode":"bin"})") == R"(property 'mode' must be one of "text", "hex")");
  CHECK(invalid(kReadFileSchema, R"({"path":"a","opts":{}})") == "missing required property 'opts/depth'");
  CHECK(invalid(kReadFileSchema, R"({"path":"a","opts":{"depth":1,"x":2}})") == "unexpected property 'opts/x'");
  CHECK(invalid(kReadFileSchema, R"({"path":"a","opts":{"depth":true}})") ==
        "property 'opts/depth' must be integer, got boolean");
  CHECK(invalid(R"({"type":"object","properties":{"q":{"type":"string","minLength":2}},"additionalProperties":false})",
                R"({"q":"a"})") == "property 'q' must be at least 2 characters long");
  CHECK(invalid(R"({"type":"object","properties":{"xs":{"type":"array","items":{"type":"string"}}},)"
                R"("additionalProperties":false})",
                R"({"xs":["a",2]})") == "property 'xs/1' must be string, got integer");
}

TEST_CASE("arguments nested absurdly deep are refused without recursion") {
  Harness h;
  auto ex = h.make();
  auto nested = [](int levels) {
    return R"({"path":"a","limit":)" + std::string(levels, '[') + std::string(levels, ']') + "}";
  };
  // Past what a model may nest (64): refused by the canonical parse, the size and depth stated.
  const std::string hundred = nested(100);
  ToolOutcome o = ex->call(Actor::kAgent, "read_file", hundred);
  CHECK(o.content ==
        "Error: arguments for 'read_file' are refused: nested 101 levels deep, deeper than the limit of "
        "64 levels (" +
            std::to_string(hundred.size()) + " bytes)");
  // A megabyte deep: refused at the 65th level, the record keeping a bounded excerpt, not the megabyte.
  std::string deep = nested(1 << 20);
  o = ex->call(Actor::kAgent, "read_file", deep);
  CHECK(o.content ==
        "Error: arguments for 'read_file' are refused: nested 1048577 levels deep, deeper than the limit "
        "of 64 levels (" +
            std::to_string(deep.size()) + " bytes)");
  REQUIRE(h.records.size() == 2);
  CHECK(h.records[1].arguments.size() < 1100);
  CHECK(h.records[1].arguments.find("bytes in all]") != std::string::npos);
  CHECK(h.read_file->calls == 0);
}

TEST_CASE("arguments larger than limits::kMaxToolArgumentsBytes are refused before parsing") {
  Harness h;
  auto ex = h.make();
  auto sized = [](std::size_t n) {
    std::string head = R"({"path":")", tail = R"("})";
    return head + std::string(n - head.size() - tail.size(), 'a') + tail;
  };
  CHECK(ex->call(Actor::kAgent, "read_file", sized(limits::kMaxToolArgumentsBytes)).content == "contents");
  CHECK(ex->call(Actor::kAgent, "read_file", sized(limits::kMaxToolArgumentsBytes + 1)).content ==
        "Error: arguments for 'read_file' are refused: 4194305 bytes, more than the limit of 4194304 bytes (nested 1 "
        "level deep)");
}

TEST_CASE("a strict schema is required to register a tool, and names are unique") {
  Harness h;
  ExecutorConfig c = h.config();
  c.tools.push_back(std::make_shared<FakeTool>("loose", R"({"type":"object","properties":{}})", returns("")));
  auto ex = ToolExecutor::create(c);
  REQUIRE_FALSE(ex.has_value());
  CHECK(ex.error().what() ==
        "registering tool 'loose': schema of tool 'loose' must set \"additionalProperties\": false");

  CHECK(CompiledSchema::compile(R"({"type":"array","additionalProperties":false})", "a").error().message ==
        "schema of tool 'a' must be an object schema (\"type\": \"object\")");
  CHECK(CompiledSchema::compile(R"({"type":"object","additionalProperties":true})", "a").error().message ==
        "schema of tool 'a' must set \"additionalProperties\": false");
  CHECK(CompiledSchema::compile(R"({"type":"object",)", "a")
            .error()
            .message.starts_with("schema of tool 'a' is not valid JSON: "));

  c = h.config();
  c.tools.push_back(std::make_shared<FakeTool>("bash", kCommandSchema, returns("")));
  CHECK(ToolExecutor::create(c).error().message == "tool 'bash' is registered twice");

  c = h.config();
  c.agent_enabled.push_back("browser");
  CHECK(ToolExecutor::create(c).error().message == "tools.agent.enabled: unknown tool 'browser'");

  c = h.config();
  c.policies["bsah"] = ToolPolicy{};
  CHECK(ToolExecutor::create(c).error().message == "tools.policies.bsah: unknown tool 'bsah'");
}

TEST_CASE("a failing tool answers Error: <message>, is counted, and the trial goes on") {
  Harness h;
  auto broken = std::make_shared<FakeTool>("broken", kAnySchema,
                                           [](const json::Value&, const CallContext&) -> Result<std::string> {
                                             return fail(Errc::kNotFound, "file not found: notes.txt");
                                           });
  auto thrower =
      std::make_shared<FakeTool>("boom", kAnySchema, [](const json::Value&, const CallContext&) -> Result<std::string> {
        throw std::runtime_error("kaboom password=hunter2");
      });
  ExecutorConfig c = h.config();
  c.tools.push_back(broken);
  c.tools.push_back(thrower);
  c.agent_enabled = {"broken", "boom", "bash"};
  auto ex = h.make(c);

  ToolOutcome o = ex->call(Actor::kAgent, "broken", "{}");
  CHECK(o.kind == ToolOutcome::Kind::kFailed);
  CHECK(o.content == "Error: file not found: notes.txt");
  o = ex->call(Actor::kAgent, "boom", "{}");
  CHECK(o.kind == ToolOutcome::Kind::kFailed);
  CHECK(o.content == "Error: internal error in tool 'boom'");
  CHECK(ex->call(Actor::kAgent, "bash", R"({"command":"ls"})").content == "ran");

  CHECK(ex->stats().at("broken").failed == 1);
  CHECK(ex->stats().at("boom").failed == 1);
  CHECK(ex->stats().at("bash").ok == 1);
  CHECK(h.log_text.str().find("kaboom password=[REDACTED]") != std::string::npos);
  CHECK(h.log_text.str().find("hunter2") == std::string::npos);
}

TEST_CASE("a tool that runs past its deadline is a timeout") {
  Harness h;
  auto slow = std::make_shared<FakeTool>("slow", kAnySchema,
                                         [](const json::Value&, const CallContext& ctx) -> Result<std::string> {
                                           while (!ctx.deadline.expired()) std::this_thread::sleep_for(Millis(5));
                                           return fail(Errc::kTimeout, "deadline passed");
                                         });
  // Ignores its deadline and succeeds late: the result is not handed over.
  auto late = std::make_shared<FakeTool>("late", kAnySchema,
                                         [](const json::Value&, const CallContext& ctx) -> Result<std::string> {
                                           while (!ctx.deadline.expired()) std::this_thread::sleep_for(Millis(5));
                                           return std::string("too late");
                                         });
  ExecutorConfig c = h.config();
  c.tools.push_back(slow);
  c.tools.push_back(late);
  c.agent_enabled = {"slow", "late"};
  c.policies["slow"] = ToolPolicy{Millis(50)};
  c.policies["late"] = ToolPolicy{Millis(60)};
  auto ex = h.make(c);

  ToolOutcome o = ex->call(Actor::kAgent, "slow", "{}");
  CHECK(o.kind == ToolOutcome::Kind::kTimeout);
  CHECK(o.content == "Error: 'slow' timed out after 50 ms");
  CHECK(o.elapsed >= Millis(50));
  o = ex->call(Actor::kAgent, "late", "{}");
  CHECK(o.kind == ToolOutcome::Kind::kTimeout);
  CHECK(o.content == "Error: 'late' timed out after 60 ms");
  CHECK(ex->stats().at("slow").timeouts == 1);
  CHECK(ex->stats().at("late").timeouts == 1);
  CHECK(ex->call(Actor::kAgent, "slow", "{}").kind == ToolOutcome::Kind::kTimeout);  // still callable
  CHECK(format_duration(Millis(2000)) == "2 s");
  CHECK(format_duration(Millis(30000)) == "30 s");
  CHECK(format_duration(Millis(2500)) == "2.5 s");
  CHECK(format_duration(Millis(1050)) == "1.05 s");
}

TEST_CASE("output beyond the cap is cut at a UTF-8 boundary and marked") {
  Harness h;
  auto big = std::make_shared<FakeTool>("big", kAnySchema, returns(std::string(20, 'a')));
  // "é" is two bytes: a cut at byte 5 would split the third one.
  auto accents = std::make_shared<FakeTool>("accents", kAnySchema, returns("ééééé"));
  ExecutorConfig c = h.config();
  c.tools = {big, accents};
  c.agent_enabled = {"big", "accents"};
  c.user_enabled = {};
  c.output_cap = 16;
  auto ex = h.make(c);
  ToolOutcome o = ex->call(Actor::kAgent, "big", "{}");
  CHECK(o.truncated);
  CHECK(o.content == std::string(16, 'a') + "\n[output truncated: 4 bytes omitted]");
  c.output_cap = 5;
  ex = h.make(c);
  o = ex->call(Actor::kAgent, "accents", "{}");
  CHECK(o.content == "éé\n[output truncated: 6 bytes omitted]");
  CHECK(h.records.back().truncated);
}

TEST_CASE("rate limits: calls per trial, and a sliding minute on the injected clock") {
  Harness h;
  ExecutorConfig c = h.config();
  c.policies["bash"] = ToolPolicy{Millis(30000), 3, 0};
  c.policies["read_file"] = ToolPolicy{Millis(30000), 0, 2};
  auto ex = h.make(c);
  const char* ls = R"({"command":"ls"})";
  const char* rf = R"({"path":"a"})";

  for (int i = 0; i < 3; ++i) CHECK(ex->call(Actor::kAgent, "bash", ls).kind == ToolOutcome::Kind::kOk);
  CHECK(ex->call(Actor::kAgent, "bash", ls).content == "Error: rate limit for 'bash' reached (3 calls per trial)");
  h.now += std::chrono::hours(5);  // per trial: time does not help
  CHECK(ex->call(Actor::kAgent, "bash", ls).kind == ToolOutcome::Kind::kRefused);
  CHECK(h.bash->calls == 3);
  // A refused call for bad arguments does not use up the budget of another tool.
  CHECK(ex->call(Actor::kAgent, "read_file", "{}").kind == ToolOutcome::Kind::kRefused);

  CHECK(ex->call(Actor::kAgent, "read_file", rf).kind == ToolOutcome::Kind::kOk);
  h.now += std::chrono::seconds(30);
  CHECK(ex->call(Actor::kAgent, "read_file", rf).kind == ToolOutcome::Kind::kOk);
  h.now += std::chrono::seconds(29);
  CHECK(ex->call(Actor::kAgent, "read_file", rf).content ==
        "Error: rate limit for 'read_file' reached (2 calls per minute)");
  h.now += std::chrono::seconds(1);  // the first call is now a minute old
  CHECK(ex->call(Actor::kAgent, "read_file", rf).kind == ToolOutcome::Kind::kOk);
  CHECK(ex->stats().at("bash").refused == 2);
  CHECK(ex->stats().at("read_file").refused == 2);
}

TEST_CASE("rate limits are per actor: the user's calls never spend the agent's budget, nor the reverse") {
  Harness h;
  ExecutorConfig c = h.config();
  c.agent_enabled = {"read_file"};
  c.user_enabled = {"read_file"};
  c.policies["read_file"] = ToolPolicy{Millis(30000), 1, 0};
  const char* rf = R"({"path":"a"})";

  SUBCASE("the user calls first: the agent still has its one call") {
    auto ex = h.make(c);
    CHECK(ex->call(Actor::kUser, "read_file", rf).kind == ToolOutcome::Kind::kOk);
    CHECK(ex->call(Actor::kAgent, "read_file", rf).kind == ToolOutcome::Kind::kOk);
    // Each actor's own budget still holds.
    CHECK(ex->call(Actor::kAgent, "read_file", rf).content ==
          "Error: rate limit for 'read_file' reached (1 calls per trial)");
    CHECK(ex->call(Actor::kUser, "read_file", rf).kind == ToolOutcome::Kind::kRefused);
  }
  SUBCASE("the agent uses its budget up: the user's dual-control call still runs") {
    auto ex = h.make(c);
    CHECK(ex->call(Actor::kAgent, "read_file", rf).kind == ToolOutcome::Kind::kOk);
    CHECK(ex->call(Actor::kAgent, "read_file", rf).kind == ToolOutcome::Kind::kRefused);
    CHECK(ex->call(Actor::kUser, "read_file", rf).kind == ToolOutcome::Kind::kOk);
  }
  SUBCASE("per minute as well") {
    c.policies["read_file"] = ToolPolicy{Millis(30000), 0, 1};
    auto ex = h.make(c);
    CHECK(ex->call(Actor::kUser, "read_file", rf).kind == ToolOutcome::Kind::kOk);
    CHECK(ex->call(Actor::kAgent, "read_file", rf).kind == ToolOutcome::Kind::kOk);
    CHECK(ex->call(Actor::kAgent, "read_file", rf).content ==
          "Error: rate limit for 'read_file' reached (1 calls per minute)");
  }
}

TEST_CASE("concurrent calls share one budget and one set of counters") {
  Harness h;
  ExecutorConfig c = h.config();
  c.on_record = nullptr;
  c.policies["bash"] = ToolPolicy{Millis(30000), 50, 0};
  auto ex = h.make(c);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) ex->call(Actor::kAgent, "bash", R"({"command":"ls"})");
    });
  for (auto& t : threads) t.join();
  CHECK(ex->stats().at("bash").ok == 50);
  CHECK(ex->stats().at("bash").refused == 110);
  CHECK(ex->totals().calls == 160);
}

TEST_CASE("rate limiter on its own") {
  Clock::time_point t{};
  RateLimiter rl([&] { return t; });
  ToolPolicy p{Millis(1000), 0, 1};
  CHECK(rl.acquire("x", p).has_value());
  CHECK(rl.acquire("x", p).error().message == "rate limit for 'x' reached (1 calls per minute)");
  CHECK(rl.acquire("y", p).has_value());  // per tool
  t += std::chrono::seconds(60);
  CHECK(rl.acquire("x", p).has_value());
  CHECK(rl.calls("x") == 2);
  rl.reset();
  CHECK(rl.calls("x") == 0);
}

TEST_CASE("records redact secrets at any depth in arguments and content; the model sees the original") {
  Harness h;
  auto echo = std::make_shared<FakeTool>("echo", kAnySchema, echoes());
  ExecutorConfig c = h.config();
  c.tools.push_back(echo);
  c.agent_enabled.push_back("echo");
  auto ex = h.make(c);

  const std::string args = R"({"payload":[{"user":"ann","Api_Key":"k-123","nested":{"PassWord":1234,"ok":"v",)"
                           R"("list":[{"SECRET":["s1",{"x":1}]},{"refresh_TOKEN":null}]}},"plain",true]})";
  ToolOutcome o = ex->call(Actor::kAgent, "echo", args);
  REQUIRE(o.kind == ToolOutcome::Kind::kOk);
  CHECK(o.content == args);  // what the model receives is not altered
  const std::string redacted =
      R"({"payload":[{"user":"ann","Api_Key":"[REDACTED]","nested":{"PassWord":"[REDACTED]","ok":"v",)"
      R"("list":[{"SECRET":"[REDACTED]"},{"refresh_TOKEN":"[REDACTED]"}]}},"plain",true]})";
  REQUIRE(h.records.size() == 1);
  CHECK(h.records[0].arguments == redacted);
  CHECK(h.records[0].content == redacted);

  // Tool-call arguments stored as a JSON string inside JSON, and free text inside strings.
  o = ex->call(
      Actor::kAgent, "echo",
      R"({"payload":{"call":"{\"token\": \"t-1\", \"q\": 2}","cmd":"curl -H 'Authorization: Bearer abc.def' x"}})");
  CHECK(
      h.records[1].arguments ==
      R"({"payload":{"call":"{\"token\":\"[REDACTED]\",\"q\":2}","cmd":"curl -H 'Authorization: Bearer [REDACTED]' x"}})");

  // Arguments that are not JSON are masked by the textual pass.
  ex->call(Actor::kAgent, "echo", R"({"payload": {"password": "hunter2", )");
  CHECK(h.records[2].arguments == R"({"payload": {"password": "[REDACTED]", )");
  CHECK(h.log_text.str().find("hunter2") == std::string::npos);
  CHECK(h.log_text.str().find("k-123") == std::string::npos);
  CHECK(h.log_text.str().find("t-1") == std::string::npos);
}

TEST_CASE("redact_json and redact_in_place") {
  CHECK(redact_json(R"({"a":1,"b":[2,3]})") == R"({"a":1,"b":[2,3]})");
  CHECK(redact_json("{ \"a\" : 1 }") == "{ \"a\" : 1 }");  // nothing to mask: byte for byte
  CHECK(redact_json(R"([{"x":{"db_Password":{"deep":[1,2]}}},{"API-KEY":false}])") ==
        R"([{"x":{"db_Password":"[REDACTED]"}},{"API-KEY":"[REDACTED]"}])");
  CHECK(
      redact_json(R"({"apikey":"1","client_secret":"2","authorization":"Basic x","max_tokens":5})") ==
      R"({"apikey":"[REDACTED]","client_secret":"[REDACTED]","authorization":"[REDACTED]","max_tokens":"[REDACTED]"})");
  CHECK(redact_json("not json, token=abc") == "not json, token=[REDACTED]");

  json::Document doc;
  doc.Parse(R"({"items":[{"Token":{"a":1}},{"name":"password: x"}]})");
  redact_in_place(doc);  // keys only: the string value is left alone
  CHECK(json::to_string(doc) == R"({"items":[{"Token":"[REDACTED]"},{"name":"password: x"}]})");
  redact_in_place(doc, doc.GetAllocator());
  CHECK(json::to_string(doc) == R"({"items":[{"Token":"[REDACTED]"},{"name":"password: [REDACTED]"}]})");
  CHECK(is_sensitive_key("X-Api-Key"));
  CHECK_FALSE(is_sensitive_key("path"));
}

TEST_CASE("redact_text masks common secret shapes in log lines") {
  CHECK(redact_text("login password=hunter2 user=ann") == "login password=[REDACTED] user=ann");
  CHECK(redact_text("GET /x?api_key=abc&page=2") == "GET /x?api_key=[REDACTED]&page=2");
  CHECK(redact_text("export GITHUB_TOKEN=ghp_123") == "export GITHUB_TOKEN=[REDACTED]");
  CHECK(redact_text(R"(body {"Secret": "s p a c e", "n": 1})") == R"(body {"Secret": "[REDACTED]", "n": 1})");
  CHECK(redact_text(R"({"token": 42, "pw_token": {"a": [1]}})") ==
        R"({"token": "[REDACTED]", "pw_token": "[REDACTED]"})");
  CHECK(redact_text("Authorization: Bearer eyJhbGc.x-y") == "Authorization: Bearer [REDACTED]");
  CHECK(redact_text("sent bearer abc123 upstream") == "sent bearer [REDACTED] upstream");
  CHECK(redact_text("secret: 'it is me'") == "secret: '[REDACTED]'");
  CHECK(redact_text(R"(args "{\"password\": \"x y\"}")") == R"(args "{\"password\": \"[REDACTED]\"}")");
  CHECK(redact_text("the token is fine") == "the token is fine");
  CHECK(redact_text("no secrets here") == "no secrets here");
  CHECK(redact_text("password=[REDACTED]") == "password=[REDACTED]");
}

namespace {

// A sandbox that only records the commands it is asked to run (and answers them with a 200).
class RecordingSandbox : public Sandbox {
 public:
  std::string describe() const override { return "recording"; }
  std::string workspace() const override { return "/work"; }
  Result<RunResult> run(const RunRequest& req) override {
    runs.push_back(req.stdin_data.value_or(""));
    RunResult r;
    r.out = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    return r;
  }
  Result<FileChunk> read_file(const std::string&, std::int64_t, std::int64_t) override { return fail(no_error()); }
  Status write_file(const std::string&, std::string_view, bool) override { return fail(no_error()); }
  Result<std::vector<DirEntry>> list_dir(const std::string&) override { return fail(no_error()); }
  Result<DirEntry> stat(const std::string&) override { return fail(no_error()); }
  Status move(const std::string&, const std::string&) override { return fail(no_error()); }
  Status copy(const std::string&, const std::string&) override { return fail(no_error()); }
  Status remove(const std::string&, bool) override { return fail(no_error()); }
  Result<std::vector<GrepMatch>> grep(const std::string&, const std::string&, int) override { return fail(no_error()); }
  std::vector<std::string> runs;

 private:
  static Error no_error() { return make_error(Errc::kUnsupported, "not in this fake"); }
};

}  // namespace

TEST_CASE("arguments that are not UTF-8 are refused for every tool before it runs") {
  Harness h;
  auto ex = h.make();
  for (std::string bad : {std::string("{\"command\":\"echo \xff\"}"), std::string("{\"command\":\"\xc3\"}"),
                          std::string("{\"command\":\"\xed\xa0\x80\"}"),         // a UTF-16 surrogate
                          std::string("{\"command\":\"\xc0\xaf\"}"),             // an overlong '/'
                          std::string("{\"command\":\"\xf4\x90\x80\x80\"}")}) {  // above U+10FFFF
    CAPTURE(bad);
    ToolOutcome o = ex->call(Actor::kAgent, "bash", bad);
    CHECK(o.kind == ToolOutcome::Kind::kRefused);
    CHECK(o.content.rfind("Error: arguments for 'bash' are not valid UTF-8 (byte 0x", 0) == 0);
  }
  ToolOutcome o = ex->call(Actor::kAgent, "bash", "{\"command\":\"echo \xff\"}");
  CHECK(o.reason == "arguments for 'bash' are not valid UTF-8 (byte 0xFF at offset 17); send text as UTF-8");
  CHECK(h.bash->calls == 0);
  // Well-formed multi-byte text passes: é, €, 😀.
  CHECK(ex->call(Actor::kAgent, "bash", "{\"command\":\"echo \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}").kind ==
        ToolOutcome::Kind::kOk);
  CHECK(h.bash->calls == 1);
}

TEST_CASE("http_request refuses a url or header with a line break before anything is sent") {
  auto sb = std::make_shared<RecordingSandbox>();
  BuiltinOptions b;
  b.sandbox = sb;
  ExecutorConfig c;
  c.tools = {http_tool(b)};
  c.agent_enabled = {"http_request"};
  auto ex = ToolExecutor::create(std::move(c));
  REQUIRE(ex.has_value());
  auto call = [&](const std::string& args) { return (*ex)->call(Actor::kAgent, "http_request", args); };

  for (const char* url : {R"(http://mock-web/\r\nGET /x)", R"(http://mock-web/a\nHost: evil)",
                          R"(http://mock-web/\u0000)", R"(http://mock-web/a b)", R"(http://mock-web\r\n/)"}) {
    CAPTURE(url);
    ToolOutcome o = call(std::string(R"({"method":"GET","url":")") + url + "\"}");
    CHECK(o.kind != ToolOutcome::Kind::kOk);
    CHECK(o.content.find("url contains a control character or a space") != std::string::npos);
  }
  ToolOutcome hdr = call(R"({"method":"GET","url":"http://mock-web/","headers":{"X-A":"1\r\nGET /x HTTP/1.1"}})");
  CHECK(hdr.kind != ToolOutcome::Kind::kOk);
  CHECK(hdr.content.find("header 'X-A' has a control character") != std::string::npos);
  ToolOutcome name = call(R"({"method":"GET","url":"http://mock-web/","headers":{"X A\r\n":"1"}})");
  CHECK(name.content.find("is not a token") != std::string::npos);
  CHECK(sb->runs.empty());  // nothing reached the network

  ToolOutcome ok = call(R"({"method":"GET","url":"http://mock-web/ok%0D%0A","headers":{"X-A":"1\t2"}})");
  CHECK(ok.kind == ToolOutcome::Kind::kOk);
  REQUIRE(sb->runs.size() == 1);
  CHECK(sb->runs[0].rfind("GET /ok%0D%0A HTTP/1.1\r\nHost: mock-web\r\n", 0) == 0);
}

TEST_CASE("a tool's ill-formed UTF-8 reaches the model, the record and the log as U+FFFD; well-formed text as is") {
  Harness h;
  h.bash = std::make_shared<FakeTool>("bash", kCommandSchema, returns("bin \xff\xfe end \xe2\x82\xac"));
  auto ex = h.make();
  ToolOutcome o = ex->call(Actor::kAgent, "bash", R"({"command":"cat /bin/true"})");
  CHECK(o.kind == ToolOutcome::Kind::kOk);
  CHECK(o.content == "bin \xef\xbf\xbd\xef\xbf\xbd end \xe2\x82\xac");
  CHECK(invalid_utf8(o.content) == std::string_view::npos);
  REQUIRE(h.records.size() == 1);
  CHECK(invalid_utf8(h.records[0].content) == std::string_view::npos);
  // Overlong forms, surrogates and cut-short sequences are each replaced; valid bytes around them kept.
  CHECK(valid_utf8("a\xc0\xaf" "b\xed\xa0\x80" "c\xe2\x82") == "a\xef\xbf\xbd\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" "c\xef\xbf\xbd\xef\xbf\xbd");
  CHECK(valid_utf8("plain ascii") == "plain ascii");
}
