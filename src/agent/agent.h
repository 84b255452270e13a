// What plays the assistant: a model, the task's reference solution, a recorded trajectory, or
// nothing at all.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agent/llm_client.h"
#include "core/chat.h"
#include "manifest/task_config.h"

namespace forge::agent {

class Agent {
 public:
  virtual ~Agent() = default;
  virtual std::string kind() const = 0;  // "llm" | "oracle" | "replay" | "noop"
  // The next assistant message. An LLM agent's errors follow LlmClient's contract.
  virtual Result<ChatResponse> next(const std::vector<ChatMessage>& messages, const std::vector<ToolDecl>& tools,
                                    Deadline deadline) = 0;
};

// A model through an LlmClient.
std::unique_ptr<Agent> llm_agent(std::shared_ptr<LlmClient> client);
// The task's solution (tool calls, or a script run through bash), else its golden actions; one
// tool call per turn, then the final message. No solution at all is an error.
Result<std::unique_ptr<Agent>> oracle_agent(const manifest::TaskConfig& task);
// The assistant tool calls of a recorded trajectory (forgectl's trajectory.json or
// Tolokaforge's trajectory.yaml), in order.
Result<std::unique_ptr<Agent>> replay_agent(const std::string& trajectory_path);
// Answers once without tools: the floor any real agent must beat.
std::unique_ptr<Agent> noop_agent();

// The marker an agent puts in its message when it considers the task done.
inline constexpr const char* kStopMarker = "###STOP###";

// A scripted agent's turn: calls[next] (then next moves on, its id "call_<n>"), or, past the last,
// `final_message` with no tool call. Free of charge.
ChatResponse scripted_turn(const std::vector<ToolCall>& calls, std::size_t& next, const std::string& final_message);

}  // namespace forge::agent
