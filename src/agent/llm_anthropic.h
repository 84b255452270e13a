// Anthropic Messages API with tool use.
#pragma once

#include <string>
#include <vector>

#include "agent/http_client.h"
#include "agent/llm_client.h"
#include "agent/llm_context.h"

namespace forge::agent {

inline constexpr int kAnthropicDefaultMaxTokens = 4096;  // the API requires max_tokens
inline constexpr const char* kAnthropicVersion = "2023-06-01";

// POST {base_url}/messages with x-api-key and anthropic-version. The leading system messages
// become `system`; a later one is sent as user text. Assistant tool calls become tool_use blocks,
// tool results tool_result blocks in a user turn; consecutive turns of one role are merged (the
// API wants user and assistant to alternate) and empty messages are left out. Tools carry their
// schema as input_schema with tool_choice auto. `seed` does not exist in this API and is not sent;
// `reasoning` is refused by the factory (thinking blocks would have to be kept signed).
class AnthropicClient final : public LlmClient {
 public:
  AnthropicClient(ResolvedModel model, const LlmContext& ctx);
  Result<ChatResponse> chat(const ChatRequest& req) override;
  std::string describe() const override { return model_.describe(); }

 private:
  ResolvedModel model_;
  LlmContext ctx_;
  LlmEndpoint endpoint_;
  HttpClient http_;
};

// The request body for `req` (exposed for tests). kInvalid when a tool's parameters are not JSON.
Result<std::string> anthropic_request_body(const ResolvedModel& model, const ChatRequest& req);

// Text, tool_use blocks (as tool calls), thinking (as reasoning), the stop reason mapped to
// forgectl's finish reasons (end_turn → stop, tool_use → tool_calls, max_tokens → length,
// refusal → content_filter) and usage. kProtocol when it is not a message.
Result<ChatResponse> parse_anthropic_response(std::string_view body);

}  // namespace forge::agent
