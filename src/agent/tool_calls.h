// Taking an assistant's tool calls in: forgectl's own id for every call, the provider's kept only
// for the round trip, and the arguments in their one canonical form (tools/arguments.h).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/chat.h"

namespace forge::agent {

// One per conversation. A model chooses its calls' ids, so two calls of a turn can share one:
// anything keyed on the model's id (a tool result, a check of what ran) could then answer for
// the wrong call. forgectl's ids are unique by construction; every consumer keys on them.
class CallIntake {
 public:
  // `prefix` keeps ids unique across conversations joined into one transcript ("s2-" for the
  // second step of a multi-step task).
  explicit CallIntake(std::string prefix = "") : prefix_(std::move(prefix)) {}

  // For each call of `m`: `id` becomes forgectl's next ("fc-1", "fc-2", … after the prefix);
  // `provider_id` keeps what the call's id was when it is present and unused earlier in this
  // conversation, else takes forgectl's (providers refuse a conversation whose tool calls share
  // an id or lack one); the name is cut to limits::kMaxToolNameBytes; the arguments are put in
  // canonical form, or refused with an excerpt kept. Calls already refused keep their excerpt.
  void take(ChatMessage& m);

 private:
  std::string prefix_;
  int next_ = 0;
  std::set<std::string> provider_ids_;
};

// forgectl's id of each call in `messages` → the id to send its provider: provider_id, or the id
// itself for a call that has none (a conversation built without an intake).
std::map<std::string, std::string> provider_call_ids(const std::vector<ChatMessage>& messages);

// The id to send for `call`, and for a tool message answering forgectl's `tool_call_id`.
std::string provider_id_of(const ToolCall& call);
std::string provider_id_of(const std::map<std::string, std::string>& ids, const std::string& tool_call_id);

}  // namespace forge::agent
