// forgectl's call ids and canonical arguments.
#include "agent/tool_calls.h"

#include "core/limits.h"
#include "core/strings.h"
#include "tools/arguments.h"

namespace forge::agent {

namespace {

// A name longer than any tool's is no tool's: kept short, on a UTF-8 boundary, for the record.
std::string bounded_name(const std::string& name) {
  if (name.size() <= limits::kMaxToolNameBytes) return valid_utf8(name);
  std::size_t n = limits::kMaxToolNameBytes;
  for (int i = 0; i < 3 && n > 0 && (static_cast<unsigned char>(name[n]) & 0xC0) == 0x80; ++i) --n;
  return valid_utf8(std::string_view(name).substr(0, n)) + "…";
}

}  // namespace

void CallIntake::take(ChatMessage& m) {
  for (auto& call : m.tool_calls) {
    const std::string sent_id = call.provider_id.empty() ? call.id : call.provider_id;
    call.id = prefix_ + "fc-" + std::to_string(++next_);
    const bool usable = !sent_id.empty() && sent_id.size() <= limits::kMaxToolNameBytes &&
                        invalid_utf8(sent_id) == std::string_view::npos && !provider_ids_.count(sent_id);
    call.provider_id = usable ? sent_id : call.id;
    provider_ids_.insert(call.provider_id);
    call.name = bounded_name(call.name);
    if (!call.refusal.empty()) continue;
    auto args = tools::canonical_arguments(call.arguments);
    call.arguments = std::move(args.text);
    call.refusal = std::move(args.refusal);
  }
}

std::map<std::string, std::string> provider_call_ids(const std::vector<ChatMessage>& messages) {
  std::map<std::string, std::string> out;
  for (const auto& m : messages)
    for (const auto& c : m.tool_calls) out[c.id] = provider_id_of(c);
  return out;
}

std::string provider_id_of(const ToolCall& call) { return call.provider_id.empty() ? call.id : call.provider_id; }

std::string provider_id_of(const std::map<std::string, std::string>& ids, const std::string& tool_call_id) {
  auto it = ids.find(tool_call_id);
  return it == ids.end() ? tool_call_id : it->second;
}

}  // namespace forge::agent
