// Sending one LLM request: pacing, retries only for what is transient, and the error it ends with.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "agent/http_client.h"
#include "agent/rate_bucket.h"
#include "agent/secrets.h"
#include "core/log.h"
#include "core/result.h"

namespace forge::agent {

struct RetryPolicy {
  int max_attempts = 6;              // tries in all, the first included
  Millis base_delay{1000};           // backoff: a uniform draw in [0, min(max, base·2^(n-1))]
  Millis max_delay{30000};
  Millis attempt_timeout{300000};    // one HTTP try; the request's deadline caps it
  Millis max_retry_after{600000};    // a server asking for a longer wait is not waited for
  std::function<void(Millis)> sleep;  // empty: a real sleep (tests record instead)
  std::function<double()> jitter;     // uniform in [0, 1); empty: a fresh random engine
};

// Where and how a request goes. `headers` hold the key: they are never logged.
struct LlmEndpoint {
  std::string what;     // "openai/gpt-4o", the subject of every message
  std::string url;      // full URL of the call
  HttpHeaders headers;
  std::string key_env;  // the variable the key came from, named in 401/403 errors
  RateBucket* bucket = nullptr;  // nullptr: not paced
};

struct Delivered {
  HttpResponse response;  // a 2xx
  int attempts = 1;
};

// POSTs `body`, retrying ONLY 408/429/5xx answers, connection failures and per-try timeouts:
// after Retry-After (or retry-after-ms) when the server gives one, else with exponential backoff
// and full jitter. Every other answer ends the call at once (Tolokaforge retried 4xx too):
//  * 400/413 about the context length → kInvalid "…exceeds the model's context length…";
//    other 400/413/422… → kInvalid (a model outcome);
//  * 401/402/403, and 429 insufficient_quota → kForbidden (a key or account problem; stops a run);
//  * 404 → kNotFound (wrong base_url or model name; stops a run);
//  * retries exhausted, or a transport failure that is not transient (TLS) → kUnavailable
//    (infra), naming the last status;
//  * the deadline passed, or would pass before the next try → kTimeout.
// A 200 whose body is only {"error": {"code": 502, …}} (OpenRouter does this) counts as that status.
// Messages go through `secrets.redact` and never contain the request headers.
Result<Delivered> post_with_retries(HttpClient& http, const LlmEndpoint& ep, const std::string& body,
                                    Deadline deadline, const RetryPolicy& policy, const Secrets& secrets,
                                    Logger* log);

// The wait a 429/503 asks for: retry-after-ms, else Retry-After as seconds or an HTTP date
// (relative to `now`); nullopt when absent or unreadable. Never negative.
std::optional<Millis> retry_after(const HttpResponse& resp, std::chrono::system_clock::time_point now);

// The backoff before try n+1 after n failed tries, with `u` uniform in [0, 1).
Millis backoff_delay(const RetryPolicy& policy, int failed_tries, double u);

// The provider's own words from an error body: error.message (OpenAI and Anthropic shapes), else
// a short excerpt of the body.
std::string provider_error_message(std::string_view body);

}  // namespace forge::agent
