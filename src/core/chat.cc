// Role names for the conversation's messages.
#include "core/chat.h"

namespace forge {

const char* role_name(ChatMessage::Role r) {
  switch (r) {
    case ChatMessage::Role::kSystem: return "system";
    case ChatMessage::Role::kUser: return "user";
    case ChatMessage::Role::kAssistant: return "assistant";
    case ChatMessage::Role::kTool: return "tool";
  }
  return "user";
}

}  // namespace forge
