// The agent's first model call, started while its sandbox is still being brought up and set up
// (docs/sweeps.md "The first wave"): the call needs only the episode's opening messages and the
// tool declarations, so a trial that would otherwise wait for up + setup before its first turn
// overlaps the two. Its tool calls run only once the episode is handed the turn (run_episode).
#pragma once

#include <atomic>
#include <future>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "agent/agent.h"
#include "agent/episode.h"

namespace forge::agent {

// What the episode opens with before any turn: the system prompt (when set) and the first user
// message. One function, so the early call and run_episode send the same messages.
std::vector<ChatMessage> opening_messages(const EpisodeSpec& spec);

// Whether a spec can open with an early turn: the first user message is the task's own (a user
// simulator that opens would need its own model call, and its tools, first).
bool may_start_early(const EpisodeSpec& spec);

// What an episode declares to the model: the executor's tools enabled for the agent.
std::vector<ToolDecl> agent_decls(const tools::ToolExecutor& executor);

// Whether two tool lists declare the same tools, in the same order, alike in every field.
bool same_decls(const std::vector<ToolDecl>& a, const std::vector<ToolDecl>& b);

class EarlyTurn {
 public:
  // Starts agent->next(opening_messages(spec), decls) on a thread of its own, under the deadline
  // the episode would give its first turn. The agent is shared with that thread so a call left
  // behind (an interrupted or discarded trial) never outlives it.
  EarlyTurn(std::shared_ptr<Agent> agent, const EpisodeSpec& spec, std::vector<ToolDecl> decls);
  // Joins a call that has ended; one still running is left to end by its own deadline (never a
  // wait here: a SIGINT or a failed sandbox must not hang on the model).
  ~EarlyTurn();
  EarlyTurn(const EarlyTurn&) = delete;
  EarlyTurn& operator=(const EarlyTurn&) = delete;

  Clock::time_point started() const { return started_; }
  const std::vector<ToolDecl>& decls() const { return decls_; }
  bool done() const;
  // When the call ended (its answer or error back); nullopt while it runs.
  std::optional<Clock::time_point> ended() const;
  // Waits for the call's answer, once; nullopt when `interrupted` rose first.
  std::optional<Result<ChatResponse>> take(const std::atomic<int>* interrupted);

 private:
  struct Shared {
    std::atomic<bool> done{false};
    std::atomic<Clock::rep> ended{0};
  };
  Clock::time_point started_;
  std::vector<ToolDecl> decls_;
  std::shared_ptr<Shared> shared_;
  std::future<Result<ChatResponse>> answer_;
  std::thread thread_;
};

}  // namespace forge::agent
