// The simulated user: Tolokaforge's scripted rules, or a model playing a persona, optionally with
// user tools (dual control).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agent/llm_client.h"
#include "manifest/task_config.h"
#include "tools/executor.h"

namespace forge::agent {

struct UserReply {
  std::string text;
  bool stop = false;  // the text carries ###STOP###: the user is done
  Usage usage;
  double cost_usd = 0;
  int api_calls = 0;
  std::vector<ChatMessage> tool_turns;  // the user's own tool calls and results, for the record
};

class UserSimulator {
 public:
  virtual ~UserSimulator() = default;
  // The user's next message, given the conversation from the agent's side.
  virtual Result<UserReply> reply(const std::vector<ChatMessage>& transcript, Deadline deadline) = 0;
};

// Ordered messages first (each once), then the first `if_assistant_contains` rule that matches
// the last assistant text (case-insensitive), then the last `default`, then "Yes, please
// proceed." for a question and "Okay." otherwise. A rule's `tool_calls` are made through
// `user_tools` (may be null when no rule has any) as Actor::kUser before its reply.
std::unique_ptr<UserSimulator> scripted_user(const manifest::UserSimulatorConfig& cfg,
                                             tools::ToolExecutor* user_tools = nullptr);

// A model playing the user: the task's backstory and persona as instructions, roles swapped so
// the model speaks as the user, ###STOP### when every step is done. `user_tools` (may be null)
// executes the user's tool calls as Actor::kUser.
std::unique_ptr<UserSimulator> llm_user(std::shared_ptr<LlmClient> client, const manifest::UserSimulatorConfig& cfg,
                                        tools::ToolExecutor* user_tools);

}  // namespace forge::agent
