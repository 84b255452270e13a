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
//  * the agent loop (CallIntake, agent/tool_calls.h) puts every call's arguments in their one
//    canonical form, or refuses them (tools::canonical_arguments) keeping a bounded excerpt; a
//    refused call is not run and the executor's "Error: arguments for 'TOOL' …" goes back to the
//    model as the tool's result (an error the model can correct, never a failure of the trial).
struct RepairedArguments {
  enum class Outcome { kValid, kRepaired, kInvalid };
  Outcome outcome = Outcome::kValid;
  std::string text;  // what goes into ToolCall::arguments
  std::string note;  // kRepaired: what was fixed ("trailing comma"); kInvalid: why it failed
};

// Strict JSON first; text past limits::kMaxToolArgumentsBytes is not looked at (kInvalid).
// Otherwise, in order and only as far as needed: empty text → {}; strip a ``` fence; single
// quotes → double quotes, only when the text has no double quote at all; remove trailing commas
// before } or ]; one missing final }. A JSON string holding an object (double encoding) is
// unwrapped. The result must parse as a JSON object, or the text is kept raw.
RepairedArguments repair_tool_arguments(std::string_view raw);

// The arguments of an earlier tool call as sent back in the conversation: the text when it is a
// JSON object, else {} (providers and chat templates refuse anything else in that place; the
// model learns what was wrong from the tool error that follows).
std::string arguments_for_wire(std::string_view arguments);

// The tool's parameter schema: its JSON text, or an empty object schema when it has none.
// kInvalid when the text is not a JSON object.
Result<std::string> tool_schema_for_wire(const ToolDecl& tool);

// Whether a provider is sent the images tools return (the browser's screenshots): the hosted APIs
// and proxies take them; self-hosted servers (vllm, ollama) mostly serve text-only models, so they
// get image_note() instead.
bool provider_takes_images(std::string_view provider);
// What a model that is sent no images reads in their place.
std::string image_note(std::size_t images, std::string_view provider);

}  // namespace forge::agent
