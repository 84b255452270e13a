#include "agent/early_turn.h"

#include <chrono>

namespace forge::agent {

std::vector<ChatMessage> opening_messages(const EpisodeSpec& spec) {
  std::vector<ChatMessage> out;
  if (!spec.system_prompt.empty()) out.push_back({ChatMessage::Role::kSystem, spec.system_prompt});
  if (!spec.initial_user_message.empty()) out.push_back({ChatMessage::Role::kUser, spec.initial_user_message});
  return out;
}

bool may_start_early(const EpisodeSpec& spec) { return !spec.initial_user_message.empty() && spec.max_turns > 0; }

std::vector<ToolDecl> agent_decls(const tools::ToolExecutor& executor) {
  std::vector<ToolDecl> decls;
  for (const auto& s : executor.specs(tools::Actor::kAgent)) decls.push_back({s.name, s.description, s.parameters});
  return decls;
}

bool same_decls(const std::vector<ToolDecl>& a, const std::vector<ToolDecl>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].description != b[i].description || a[i].parameters != b[i].parameters)
      return false;
  return true;
}

EarlyTurn::EarlyTurn(std::shared_ptr<Agent> agent, const EpisodeSpec& spec, std::vector<ToolDecl> decls)
    : started_(Clock::now()), decls_(std::move(decls)), shared_(std::make_shared<Shared>()) {
  // The first turn's deadline as run_episode sets it: the turn's own, within the episode's, both
  // counted from now (the overlapped time is the agent's time).
  const Deadline d = Deadline::in(spec.turn_timeout).earlier(Deadline::in(spec.episode_timeout));
  std::promise<Result<ChatResponse>> promise;
  answer_ = promise.get_future();
  thread_ = std::thread([agent = std::move(agent), messages = opening_messages(spec), decls = decls_, d,
                         shared = shared_, promise = std::move(promise)]() mutable {
    auto r = agent->next(messages, decls, d);
    shared->ended.store(Clock::now().time_since_epoch().count());
    shared->done.store(true);
    promise.set_value(std::move(r));
  });
}

EarlyTurn::~EarlyTurn() {
  if (!thread_.joinable()) return;
  if (done()) {
    thread_.join();
    return;
  }
  thread_.detach();
}

bool EarlyTurn::done() const { return shared_->done.load(); }

std::optional<Clock::time_point> EarlyTurn::ended() const {
  if (!done()) return std::nullopt;
  return Clock::time_point(Clock::duration(shared_->ended.load()));
}

std::optional<Result<ChatResponse>> EarlyTurn::take(const std::atomic<int>* interrupted) {
  // Polled, so a SIGINT is seen within a tenth of a second whatever the model does.
  while (answer_.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready)
    if (interrupted && interrupted->load() > 0) return std::nullopt;
  return answer_.get();
}

}  // namespace forge::agent
