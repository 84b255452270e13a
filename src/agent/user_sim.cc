// The simulated user.
#include "agent/user_sim.h"

#include <algorithm>

#include "agent/agent.h"
#include "agent/tool_calls.h"
#include "core/strings.h"

namespace forge::agent {

namespace {

const ChatMessage* last_of(const std::vector<ChatMessage>& t, ChatMessage::Role role) {
  for (auto it = t.rbegin(); it != t.rend(); ++it)
    if (it->role == role) return &*it;
  return nullptr;
}

class ScriptedUser final : public UserSimulator {
 public:
  ScriptedUser(manifest::UserSimulatorConfig cfg, tools::ToolExecutor* t) : cfg_(std::move(cfg)), tools_(t) {}
  Result<UserReply> reply(const std::vector<ChatMessage>& t, Deadline) override {
    UserReply r;
    const manifest::ScriptedRule* rule = pick(t);
    r.text = rule ? rule->user : fallback(t);
    // The rule's own tool calls first (dual control), through the same executor as the agent's,
    // as the user: a call the task did not enable for the user is refused there.
    if (rule && !rule->tool_calls.empty()) {
      if (!tools_) return fail(Errc::kInvalid, "user simulator: a scripted rule calls tools, but the user has none");
      ChatMessage calls{ChatMessage::Role::kAssistant, ""};
      for (std::size_t i = 0; i < rule->tool_calls.size(); ++i)
        calls.tool_calls.push_back({"user_call_" + std::to_string(++calls_made_), rule->tool_calls[i].name,
                                    rule->tool_calls[i].arguments_json});
      r.tool_turns.push_back(calls);
      for (const auto& call : calls.tool_calls) {
        auto out = tools_->call(tools::Actor::kUser, call.name, call.arguments);
        ChatMessage tm{ChatMessage::Role::kTool, out.content};
        tm.tool_call_id = call.id;
        tm.name = call.name;
        tm.tool_error = out.kind != tools::ToolOutcome::Kind::kOk;
        r.tool_turns.push_back(tm);
      }
    }
    r.stop = r.text.find(kStopMarker) != std::string::npos;
    return r;
  }

 private:
  // The rule that answers, or null when none does.
  const manifest::ScriptedRule* pick(const std::vector<ChatMessage>& t) const {
    // In-order messages, each once: skipped when an earlier user message already said it.
    for (const auto& rule : cfg_.scripted_flow) {
      if (rule.is_default || !rule.if_assistant_contains.empty()) continue;
      bool said = std::any_of(t.begin(), t.end(), [&](const ChatMessage& m) {
        return m.role == ChatMessage::Role::kUser && m.content == rule.user;
      });
      if (!said) return &rule;
    }
    const ChatMessage* last = last_of(t, ChatMessage::Role::kAssistant);
    std::string said = last ? to_lower(last->content) : "";
    for (const auto& rule : cfg_.scripted_flow)
      if (!rule.if_assistant_contains.empty() && said.find(to_lower(rule.if_assistant_contains)) != std::string::npos)
        return &rule;
    for (auto it = cfg_.scripted_flow.rbegin(); it != cfg_.scripted_flow.rend(); ++it)
      if (it->is_default) return &*it;
    return nullptr;
  }

  static std::string fallback(const std::vector<ChatMessage>& t) {
    const ChatMessage* last = last_of(t, ChatMessage::Role::kAssistant);
    return last && last->content.find('?') != std::string::npos ? "Yes, please proceed." : "Okay.";
  }

  manifest::UserSimulatorConfig cfg_;
  tools::ToolExecutor* tools_;
  int calls_made_ = 0;
};

constexpr const char* kUserRules =
    "You are playing a user who talks to a customer-service or assistant agent. Rules:\n"
    "- Generate one line at a time to simulate the user's message.\n"
    "- Do not give away all the instruction at once; only provide what is needed for the current step.\n"
    "- Do not make up information that is not in the instruction.\n"
    "- Do not repeat the instruction verbatim; use your own words.\n"
    "- When the goal of the instruction is reached, or cannot be reached, reply with '###STOP###' alone.\n"
    "- Stay in character; never say that you are simulating, or mention prompts or models.\n";

class LlmUser final : public UserSimulator {
 public:
  LlmUser(std::shared_ptr<LlmClient> c, manifest::UserSimulatorConfig cfg, tools::ToolExecutor* t)
      : client_(std::move(c)), cfg_(std::move(cfg)), tools_(t) {}

  Result<UserReply> reply(const std::vector<ChatMessage>& t, Deadline deadline) override {
    ChatRequest req;
    std::string system = std::string(kUserRules) + "\nPersona: " + cfg_.persona + "\n\nInstruction: " + cfg_.backstory;
    req.messages.push_back({ChatMessage::Role::kSystem, system});
    // Roles swapped: the agent speaks as "user" to this model, the simulated user as "assistant".
    for (const auto& m : t) {
      if (m.role == ChatMessage::Role::kAssistant && !m.content.empty()) req.messages.push_back({ChatMessage::Role::kUser, m.content});
      else if (m.role == ChatMessage::Role::kUser) req.messages.push_back({ChatMessage::Role::kAssistant, m.content});
    }
    if (req.messages.size() == 1 || req.messages.back().role != ChatMessage::Role::kUser)
      req.messages.push_back({ChatMessage::Role::kUser, "Hi! How can I help you today?"});
    if (tools_)
      for (const auto& s : tools_->specs(tools::Actor::kUser)) req.tools.push_back({s.name, s.description, s.parameters});
    req.deadline = deadline;

    UserReply r;
    CallIntake intake("user-");
    for (int round = 0; round < 8; ++round) {
      auto resp = client_->chat(req);
      if (!resp) return resp.fail_with("user simulator");
      r.usage += resp->usage;
      r.cost_usd += resp->cost_usd.value_or(0);
      ++r.api_calls;
      if (resp->message.tool_calls.empty() || !tools_) {
        r.text = trim(resp->message.content);
        if (r.text.empty()) r.text = "Okay.";
        r.stop = r.text.find(kStopMarker) != std::string::npos;
        return r;
      }
      // The user acts on its own side (dual control), then speaks.
      intake.take(resp->message);
      req.messages.push_back(resp->message);
      r.tool_turns.push_back(resp->message);
      for (const auto& call : resp->message.tool_calls) {
        auto out = tools_->call(tools::Actor::kUser, call.name, tools::ToolArguments{call.arguments, call.refusal});
        ChatMessage tm{ChatMessage::Role::kTool, out.content};
        tm.tool_call_id = call.id;
        tm.name = call.name;
        tm.tool_error = out.kind != tools::ToolOutcome::Kind::kOk;
        req.messages.push_back(tm);
        r.tool_turns.push_back(tm);
      }
    }
    return fail(Errc::kInvalid, "user simulator: kept calling tools without answering");
  }

 private:
  std::shared_ptr<LlmClient> client_;
  manifest::UserSimulatorConfig cfg_;
  tools::ToolExecutor* tools_;
};

}  // namespace

std::unique_ptr<UserSimulator> scripted_user(const manifest::UserSimulatorConfig& cfg, tools::ToolExecutor* user_tools) {
  return std::make_unique<ScriptedUser>(cfg, user_tools);
}

std::unique_ptr<UserSimulator> llm_user(std::shared_ptr<LlmClient> client, const manifest::UserSimulatorConfig& cfg,
                                        tools::ToolExecutor* user_tools) {
  return std::make_unique<LlmUser>(std::move(client), cfg, user_tools);
}

}  // namespace forge::agent
