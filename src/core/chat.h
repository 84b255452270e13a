// The conversation as forgectl keeps it: provider-neutral messages, tool calls and usage. In core
// because the agent loop writes it and grading reads it, and neither includes the other.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"

namespace forge {

struct ToolCall {
  // forgectl's own id for the call, unique in the trial (agent/tool_calls.h): what a tool
  // result's tool_call_id names and what every grader, record and page keys on. A client fills
  // in the provider's; the agent loop puts forgectl's here and moves that to provider_id.
  std::string id;
  std::string name;
  // The canonical JSON text of the arguments (tools/arguments.h) once the agent loop has taken
  // the call in; before that, the text as the model produced it (repaired when unambiguous).
  std::string arguments;
  // The id the model's provider gave the call, kept only to send the conversation back to it
  // (forgectl's id in its place when the provider's was missing or not unique).
  std::string provider_id;
  // Why the arguments were refused (completing "arguments for 'TOOL' …"); `arguments` then holds
  // a bounded excerpt of what was sent, never the whole. Empty for accepted arguments.
  std::string refusal;
};

// An image a tool returned (the browser's screenshot), sent to providers that take images.
struct ImagePart {
  std::string media_type;  // "image/png"
  std::string base64;      // the bytes, base64 (RFC 4648)
  // Where the trial's record keeps it, relative to the trial's directory ("screenshots/001.png");
  // empty: not kept (no record to keep it in, or dropped past the record's limits).
  std::string path;
};

struct ChatMessage {
  enum class Role { kSystem, kUser, kAssistant, kTool };
  Role role = Role::kUser;
  std::string content;
  std::vector<ToolCall> tool_calls;  // assistant only
  std::string tool_call_id;          // tool only: forgectl's id of the call it answers (ToolCall::id)
  std::string name;                  // tool only: the tool's name
  bool tool_error = false;           // tool only: the call was refused, failed or timed out
  std::string reasoning;             // assistant: reasoning text the provider returned, if any
  std::vector<ImagePart> images;     // tool only: images the tool returned besides its text
};
const char* role_name(ChatMessage::Role r);  // "system" | "user" | "assistant" | "tool"

struct ToolDecl {
  std::string name, description;
  std::string parameters;  // JSON Schema text
};

struct Usage {
  std::int64_t input_tokens = 0, output_tokens = 0;
  Usage& operator+=(const Usage& o) {
    input_tokens += o.input_tokens;
    output_tokens += o.output_tokens;
    return *this;
  }
};

struct ChatRequest {
  std::vector<ChatMessage> messages;  // the system prompt is the first message when present
  std::vector<ToolDecl> tools;
  Deadline deadline = Deadline::never();  // the whole call, retries included
};

struct ChatResponse {
  ChatMessage message;  // role kAssistant
  Usage usage;
  std::optional<double> cost_usd;  // nullopt: the model's price is unknown
  std::string finish_reason;       // "stop" | "tool_calls" | "length" | "content_filter" | …
  Millis latency{0};
  int attempts = 1;
};

}  // namespace forge
