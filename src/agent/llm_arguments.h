// Tool-call arguments as models produce them (strict JSON, unambiguous repairs, or the raw text),
// and tool schemas and arguments as they are sent back to a provider.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/chat.h"
#include "core/result.h"

namespace forge::agent {

// The contract between the LLM clients and the agent loop:
//  * a client puts into ToolCall::arguments either a JSON object's text (the model's own bytes
//    when they parse, else a repaired and re-serialised text) or, when no unambiguous repair
//    exists, the raw text exactly as the model produced it;
//  * the agent loop calls tool_arguments_error() before running a tool; when it returns a
//    message, the tool is not run and that message goes back to the model as the tool's result
//    (an error the model can correct, never a failure of the trial).
struct RepairedArguments {
  enum class Outcome { kValid, kRepaired, kInvalid };
  Outcome outcome = Outcome::kValid;
  std::string text;  // what goes into ToolCall::arguments
  std::string note;  // kRepaired: what was fixed ("trailing comma"); kInvalid: why it failed
};

// Strict JSON first. Otherwise, in order and only as far as needed: empty text → {}; strip a
// ``` fence; single quotes → double quotes, only when the text has no double quote at all;
// remove trailing commas before } or ]; one missing final }. A JSON string holding an object (double
// encoding) is unwrapped. The result must parse as a JSON object, or the text is kept raw.
RepairedArguments repair_tool_arguments(std::string_view raw);

// nullopt when `arguments` is a JSON object; otherwise the tool result to send back, e.g.
// "Error: the arguments are not a valid JSON object (missing a comma or '}' after an object member at
// offset 14); call the tool again with a JSON object matching its parameters".
std::optional<std::string> tool_arguments_error(std::string_view arguments);

// The arguments of an earlier tool call as sent back in the conversation: the text when it is a
// JSON object, else {} (providers and chat templates refuse anything else in that place; the
// model learns what was wrong from the tool error that follows).
std::string arguments_for_wire(std::string_view arguments);

// The tool's parameter schema: its JSON text, or an empty object schema when it has none.
// kInvalid when the text is not a JSON object.
Result<std::string> tool_schema_for_wire(const ToolDecl& tool);

}  // namespace forge::agent
