// An LLM behind one interface: OpenAI-compatible chat completions or Anthropic Messages, with
// retries, rate limits and pricing. Runs on the host; keys never leave it.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/chat.h"
#include "core/result.h"
#include "manifest/run_config.h"

namespace forge::agent {

// Error kinds an LLM call ends with, as the trial loop needs them:
//  kUnavailable  429/5xx/timeouts still failing after retries, connection errors: infra, retried
//                with a fresh sandbox by the sweep, never a model failure;
//  kInvalid      the request was refused as too long (context length) or malformed: a model outcome;
//  kForbidden    401/403 (a bad key), 402 or a 429 insufficient_quota (no credit): stops the run;
//  kNotFound     404 (a wrong base_url or model name): stops the run, like kForbidden;
//  kTimeout      the request's deadline passed (or would pass before the next retry).
// Tool-call arguments that are not a JSON object reach the loop raw (llm_arguments.h): the loop
// answers them with a tool error, never ends the trial for them.
class LlmClient {
 public:
  virtual ~LlmClient() = default;
  virtual Result<ChatResponse> chat(const ChatRequest& req) = 0;
  virtual std::string describe() const = 0;  // "openai/gpt-4o-mini"
};

}  // namespace forge::agent
