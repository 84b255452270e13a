// OpenAI-compatible chat completions with tool calling (OpenAI, OpenRouter, vLLM, Ollama, LiteLLM).
#pragma once

#include <string>
#include <vector>

#include "agent/http_client.h"
#include "agent/llm_client.h"
#include "agent/llm_context.h"

namespace forge::agent {

// POST {base_url}/chat/completions with `Authorization: Bearer <key>` when there is a key.
// Sends messages (assistant tool_calls, tool results by tool_call_id), tools as functions with
// tool_choice "auto", temperature, top_p, max_tokens (max_completion_tokens for OpenAI itself),
// seed, and reasoning when not "off" (reasoning_effort; OpenRouter: reasoning.effort).
// OpenAI's reasoning models (o1, o3, o4, gpt-5…) refuse temperature and top_p, so they are
// not sent to them. Tool-call arguments are repaired as llm_arguments.h describes.
class OpenAiClient final : public LlmClient {
 public:
  OpenAiClient(ResolvedModel model, const LlmContext& ctx);
  Result<ChatResponse> chat(const ChatRequest& req) override;
  std::string describe() const override { return model_.describe(); }

 private:
  ResolvedModel model_;
  LlmContext ctx_;
  LlmEndpoint endpoint_;
  HttpClient http_;
};

// The request body for `req` (exposed for tests). kInvalid when a tool's parameters are not JSON.
Result<std::string> openai_request_body(const ResolvedModel& model, const ChatRequest& req);

// The assistant message, finish reason and usage from a response body; `repairs` (if given)
// receives one note per repaired or unrepairable tool call. kProtocol when it is not a completion.
Result<ChatResponse> parse_openai_response(std::string_view body, std::vector<std::string>* repairs = nullptr);

}  // namespace forge::agent
