// Retries against the scripted server: only 408/429/5xx, timeouts and refused connections are
// retried, with Retry-After or jittered backoff; everything else ends the call at once.
#include <doctest/doctest.h>

#include <ctime>

#include "agent/llm_retry.h"
#include "support/fake_llm_server.h"

using namespace forge;
using namespace forge::agent;
using forge::test::LlmHarness;
using forge::test::ScriptedResponse;
namespace fl = forge::test::fake_llm;
using std::chrono::milliseconds;

namespace {

ChatRequest hello() {
  ChatRequest req;
  ChatMessage m;
  m.content = "hello";
  req.messages.push_back(m);
  return req;
}

std::string http_date(std::chrono::system_clock::time_point t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

}  // namespace

TEST_CASE("llm retry: a 429 with Retry-After, then 200, is retried after the time asked") {
  LlmHarness h;
  h.server.push(429, fl::openai_error("Rate limit reached", "rate_limit_exceeded", "requests"), {{"Retry-After", "2"}});
  h.server.push(200, fl::openai_text("hi"));
  auto r = h.client("openai", "gpt-4o")->chat(hello());
  REQUIRE(r);
  CHECK(r->attempts == 2);
  CHECK(r->message.content == "hi");
  REQUIRE(h.sleeps.size() == 1);
  CHECK(h.sleeps[0] == milliseconds(2000));
  CHECK(h.server.requests().size() == 2);
}

TEST_CASE("llm retry: Retry-After as an HTTP date and retry-after-ms are honoured") {
  LlmHarness h;
  auto at = std::chrono::system_clock::now() + std::chrono::seconds(5);
  h.server.push(503, "upstream busy", {{"Retry-After", http_date(at)}});
  h.server.push(429, "{}", {{"retry-after-ms", "750"}, {"Retry-After", "9"}});
  h.server.push(200, fl::anthropic_text("ok"));
  auto r = h.client("anthropic", "claude-sonnet-4")->chat(hello());
  REQUIRE(r);
  CHECK(r->attempts == 3);
  REQUIRE(h.sleeps.size() == 2);
  CHECK(h.sleeps[0] > milliseconds(3000));  // the date has one-second resolution
  CHECK(h.sleeps[0] <= milliseconds(5000));
  CHECK(h.sleeps[1] == milliseconds(750));
}

TEST_CASE("llm retry: a 500 storm ends as infra (kUnavailable) after max attempts, with backoff") {
  LlmHarness h;
  h.server.push(ScriptedResponse{500, {}, fl::openai_error("The server had an error", "server_error", "server_error")}, 10);
  auto r = h.client("openai", "gpt-4o-mini")->chat(hello());
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::kUnavailable);
  CHECK(is_transient(r.error().code));  // infra: the sweep retries the trial, the model is not blamed
  CHECK(r.error().message.find("gave up after 6 attempts") != std::string::npos);
  CHECK(r.error().message.find("HTTP 500: The server had an error") != std::string::npos);
  CHECK(h.server.requests().size() == 6);
  // Full jitter fixed at 0.5 by the harness: half of 1, 2, 4, 8, 16 s.
  CHECK(h.sleeps == std::vector<milliseconds>{milliseconds(500), milliseconds(1000), milliseconds(2000),
                                               milliseconds(4000), milliseconds(8000)});
}

TEST_CASE("llm retry: context length is a model outcome (kInvalid) without a retry") {
  LlmHarness h;
  h.server.push(400, fl::openai_error("This model's maximum context length is 128000 tokens.", "context_length_exceeded"));
  auto r = h.client("openai", "gpt-4o")->chat(hello());
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::kInvalid);
  CHECK(r.error().message.find("context length") != std::string::npos);
  CHECK(h.server.requests().size() == 1);
  CHECK(h.sleeps.empty());
}

TEST_CASE("llm retry: 401 is kForbidden without a retry, and the key never shows in the error") {
  LlmHarness h;
  // Providers echo (part of) a bad key: the message must not carry it.
  h.server.push(401, fl::openai_error(std::string("Incorrect API key provided: ") + LlmHarness::kOpenAiKey, "invalid_api_key"));
  auto r = h.client("openai", "gpt-4o")->chat(hello());
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::kForbidden);
  CHECK(r.error().message.find("OPENAI_API_KEY") != std::string::npos);
  CHECK(r.error().what().find(LlmHarness::kOpenAiKey) == std::string::npos);
  CHECK(r.error().message.find("[REDACTED]") != std::string::npos);
  CHECK(h.server.requests().size() == 1);
  CHECK(h.sleeps.empty());
}

TEST_CASE("llm retry: other refusals end at once with their own kind") {
  LlmHarness h;
  auto client = h.client("openai", "gpt-4o");
  h.server.push(404, fl::openai_error("The model `gpt-9` does not exist", "model_not_found"));
  auto nf = client->chat(hello());
  REQUIRE_FALSE(nf);
  CHECK(nf.error().code == Errc::kNotFound);

  h.server.push(429, fl::openai_error("You exceeded your current quota", "insufficient_quota"));
  auto quota = client->chat(hello());
  REQUIRE_FALSE(quota);
  CHECK(quota.error().code == Errc::kForbidden);  // waiting does not bring credit back

  h.server.push(422, R"({"detail":"bad"})");
  auto bad = client->chat(hello());
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == Errc::kInvalid);
  CHECK(h.server.requests().size() == 3);
  CHECK(h.sleeps.empty());
}

TEST_CASE("llm retry: a try that times out is retried; an unreachable server ends as kUnavailable") {
  LlmHarness h;
  h.ctx.retry.attempt_timeout = milliseconds(300);
  h.server.push(ScriptedResponse{200, {}, fl::openai_text("late"), milliseconds(3000)});
  h.server.push(200, fl::openai_text("on time"));
  auto r = h.client("openai", "gpt-4o")->chat(hello());
  REQUIRE(r);
  CHECK(r->attempts == 2);
  CHECK(r->message.content == "on time");

  // A port nobody listens on: connection refused, retried, then infra.
  int port;
  {
    forge::test::FakeLlmServer gone;
    port = gone.port();
  }
  auto m = h.model("openai", "gpt-4o");
  m.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  h.ctx.retry.max_attempts = 3;
  auto down = h.client(m)->chat(hello());
  REQUIRE_FALSE(down);
  CHECK(down.error().code == Errc::kUnavailable);
  CHECK(down.error().message.find("gave up after 3 attempts") != std::string::npos);
}

TEST_CASE("llm retry: the request's deadline bounds the retries") {
  LlmHarness h;
  h.server.push(503, "{}", {{"Retry-After", "60"}});
  ChatRequest req = hello();
  req.deadline = Deadline::in(milliseconds(2000));
  auto r = h.client("openai", "gpt-4o")->chat(req);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::kTimeout);
  CHECK(r.error().message.find("HTTP 503") != std::string::npos);
  CHECK(h.sleeps.empty());  // it did not wait for a retry it could not make

  h.server.push(ScriptedResponse{200, {}, fl::openai_text("late"), milliseconds(3000)});
  req.deadline = Deadline::in(milliseconds(300));
  auto slow = h.client("openai", "gpt-4o")->chat(req);
  REQUIRE_FALSE(slow);
  CHECK(slow.error().code == Errc::kTimeout);
}

TEST_CASE("llm retry: OpenRouter's 200 carrying an upstream error is retried like that error") {
  LlmHarness h;
  h.server.push(200, R"({"error":{"code":502,"message":"Provider returned error"}})");
  h.server.push(200, fl::openai_text("ok"));
  auto r = h.client("openrouter", "openai/gpt-4o")->chat(hello());
  REQUIRE(r);
  CHECK(r->attempts == 2);
  CHECK(h.sleeps.size() == 1);
}

TEST_CASE("llm retry: a 200 that is not a completion is infra, not the model's failure") {
  LlmHarness h;
  h.server.push(200, "<html>captive portal</html>");
  auto r = h.client("openai", "gpt-4o")->chat(hello());
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::kUnavailable);
}

TEST_CASE("llm retry: backoff doubles from the base and stops at the cap") {
  RetryPolicy p;  // 1 s base, 30 s cap
  CHECK(backoff_delay(p, 1, 1.0) == milliseconds(1000));
  CHECK(backoff_delay(p, 3, 1.0) == milliseconds(4000));
  CHECK(backoff_delay(p, 6, 1.0) == milliseconds(30000));
  CHECK(backoff_delay(p, 20, 0.25) == milliseconds(7500));
  CHECK(backoff_delay(p, 2, 0.0) == milliseconds(0));

  forge::agent::HttpResponse resp;
  resp.headers = {{"retry-after", "1.5"}};
  CHECK(retry_after(resp, std::chrono::system_clock::now()) == milliseconds(1500));
  resp.headers = {{"retry-after", "soon"}};
  CHECK_FALSE(retry_after(resp, std::chrono::system_clock::now()));
  resp.headers = {{"retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"}};  // in the past
  CHECK(retry_after(resp, std::chrono::system_clock::now()) == milliseconds(0));
}

TEST_CASE("llm retry: all trials of a provider share one token bucket") {
  LlmHarness h;
  // A fake clock that sleeping advances: the rate shows without waiting for it.
  auto now = std::make_shared<Clock::time_point>(Clock::now());
  auto slept = std::make_shared<milliseconds>(0);
  RateBucketRegistry registry(RateBucketRegistry::per_second(2), [now] { return *now; },
                              [now, slept](milliseconds d) {
                                *now += d;
                                *slept += d;
                              });
  forge::agent::LlmContext ctx{h.secrets, registry, h.pricing, nullptr, h.ctx.retry};
  auto m = h.model("openai", "gpt-4o");
  auto a = make_llm_client(m, ctx), b = make_llm_client(m, ctx);
  REQUIRE(a);
  REQUIRE(b);
  h.server.push(ScriptedResponse{200, {}, fl::openai_text("ok")}, 6);
  for (int i = 0; i < 3; ++i) {
    REQUIRE((*a)->chat(hello()));
    REQUIRE((*b)->chat(hello()));
  }
  // 2 per second with a burst of 2: six calls need two more seconds, whichever client makes them.
  CHECK(*slept == milliseconds(2000));
  auto other = h.model("anthropic", "claude-sonnet-4");
  CHECK(registry.bucket("anthropic " + other.base_url) != registry.bucket("openai " + m.base_url));
}
