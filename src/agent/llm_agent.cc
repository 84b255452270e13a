// The agent that is a model.
#include "agent/agent.h"

namespace forge::agent {

namespace {

class LlmAgent final : public Agent {
 public:
  explicit LlmAgent(std::shared_ptr<LlmClient> c) : c_(std::move(c)) {}
  std::string kind() const override { return "llm"; }
  Result<ChatResponse> next(const std::vector<ChatMessage>& messages, const std::vector<ToolDecl>& tools,
                            Deadline deadline) override {
    return c_->chat(ChatRequest{messages, tools, deadline});
  }

 private:
  std::shared_ptr<LlmClient> c_;
};

}  // namespace

std::unique_ptr<Agent> llm_agent(std::shared_ptr<LlmClient> client) { return std::make_unique<LlmAgent>(std::move(client)); }

}  // namespace forge::agent
