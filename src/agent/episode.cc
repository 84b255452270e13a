// The agent loop.
#include "agent/episode.h"

#include <map>

#include "agent/early_turn.h"
#include "agent/tool_calls.h"
#include "core/strings.h"

namespace forge::agent {

const char* termination_name(Termination t) {
  switch (t) {
    case Termination::kAgentDone: return "agent_done";
    case Termination::kUserStop: return "user_stop";
    case Termination::kMaxTurns: return "max_turns";
    case Termination::kTimeout: return "timeout";
    case Termination::kStuck: return "stuck_detected";
    case Termination::kBudgetExhausted: return "budget_exhausted";
    case Termination::kModelError: return "model_error";
    case Termination::kInfraError: return "infra_error";
    case Termination::kInterrupted: return "interrupted";
    case Termination::kSandboxDestroyed:
      return "sandbox_destroyed";
    case Termination::kSandboxBroken:
      return "sandbox_broken";
  }
  return "error";
}

namespace {

// Maps an LLM error to how the episode ends (llm_client.h's contract).
Termination termination_of(const Error& e) {
  switch (e.code) {
    case Errc::kCancelled: return e.message.find("budget") != std::string::npos ? Termination::kBudgetExhausted : Termination::kInterrupted;
    case Errc::kTimeout: return Termination::kTimeout;
    case Errc::kInvalid: return Termination::kModelError;
    default: return Termination::kInfraError;
  }
}

class StuckDetector {
 public:
  explicit StuckDetector(const manifest::StuckHeuristics& h) : h_(h) {}
  // True when the last `max_repeated_tool_calls` calls were all the same call, or the last
  // `max_idle_turns` answers without tool calls were all the same text.
  bool observe(const ChatMessage& m) {
    if (!h_.enabled) return false;
    if (!m.tool_calls.empty()) {
      idle_ = 0;
      for (const auto& c : m.tool_calls) {
        std::string sig = c.name + "\x1f" + c.arguments;
        repeats_ = sig == last_call_ ? repeats_ + 1 : 1;
        last_call_ = sig;
      }
      return h_.max_repeated_tool_calls > 0 && repeats_ >= h_.max_repeated_tool_calls;
    }
    idle_ = m.content == last_text_ ? idle_ + 1 : 1;
    last_text_ = m.content;
    return h_.max_idle_turns > 0 && idle_ >= h_.max_idle_turns;
  }

 private:
  manifest::StuckHeuristics h_;
  std::string last_call_, last_text_;
  int repeats_ = 0, idle_ = 0;
};

}  // namespace

Episode run_episode(Agent& agent, UserSimulator* user, tools::ToolExecutor& executor, const EpisodeSpec& spec,
                    const std::atomic<int>* interrupted) {
  Episode ep;
  // An early first turn's time is the agent's: the episode began when that call did.
  const auto start = spec.early ? spec.early->started() : Clock::now();
  const Deadline episode_end(start + spec.episode_timeout);
  auto finish = [&](Termination t, std::string error = {}) {
    ep.termination = t;
    ep.error = std::move(error);
    ep.elapsed = elapsed_since(start);
    return ep;
  };
  auto failed = [&](const Error& e) {
    ep.stops_run = e.code == Errc::kForbidden || e.code == Errc::kNotFound;
    // A call that ran out of time: the model's own timeout only when the episode's deadline is
    // what passed; a provider that did not answer within the turn's deadline (after its retries)
    // failed, which is not the model's doing (docs/errors.md).
    if (e.code == Errc::kTimeout && !episode_end.expired()) return finish(Termination::kInfraError, e.what());
    return finish(termination_of(e), e.what());
  };
  auto stopped = [&] { return interrupted && interrupted->load() > 0; };

  ep.messages = opening_messages(spec);
  const std::vector<ToolDecl> decls = agent_decls(executor);

  auto user_turn = [&]() -> std::optional<Episode> {
    auto r = user->reply(ep.messages, Deadline::in(spec.turn_timeout).earlier(episode_end));
    if (!r) return failed(r.error());
    ep.user_usage += r->usage;
    ep.user_cost_usd += r->cost_usd;
    ep.user_calls += r->api_calls;
    ep.messages.push_back({ChatMessage::Role::kUser, r->text});
    if (r->stop) return finish(Termination::kUserStop);
    return std::nullopt;
  };

  if (spec.initial_user_message.empty() && user)
    if (auto done = user_turn()) return *done;
  // The early call is the first turn only when it was asked what this turn would ask.
  EarlyTurn* early = spec.early && same_decls(spec.early->decls(), decls) ? spec.early : nullptr;

  StuckDetector stuck(spec.stuck);
  CallIntake intake(spec.call_id_prefix);
  for (ep.turns = 0; ep.turns < spec.max_turns; ++ep.turns) {
    // An early answer already paid for is taken and counted before anything ends the episode (the
    // tool loop below still stops at an interrupt before any call).
    std::optional<Result<ChatResponse>> taken;
    if (ep.turns == 0 && early) {
      taken = early->take(interrupted);
      if (!taken) return finish(Termination::kInterrupted);
    } else {
      if (stopped()) return finish(Termination::kInterrupted);
      if (episode_end.expired()) return finish(Termination::kTimeout);
    }
    auto resp = taken ? std::move(*taken)
                      : agent.next(ep.messages, decls, Deadline::in(spec.turn_timeout).earlier(episode_end));
    if (!resp) return failed(resp.error());
    ++ep.agent_calls;
    ep.agent_usage += resp->usage;
    if (resp->cost_usd) ep.agent_cost_usd += *resp->cost_usd;
    else ep.cost_known = false;
    ep.messages.push_back(std::move(resp->message));
    ChatMessage& said = ep.messages.back();
    // Before anything reads the calls: forgectl's ids, the arguments canonical or refused.
    intake.take(said);
    if (stuck.observe(said)) return finish(Termination::kStuck);

    if (!said.tool_calls.empty()) {
      // A copy: the results pushed below may move the message `said` refers to.
      const std::vector<ToolCall> calls = said.tool_calls;
      for (const auto& call : calls) {
        if (stopped()) return finish(Termination::kInterrupted);
        // Refused arguments reach the executor with their refusal: it answers with a tool error.
        auto out = [&] {
          Slots::Hold slot(spec.exec_slots);
          return executor.call(tools::Actor::kAgent, call.name, tools::ToolArguments{call.arguments, call.refusal});
        }();
        ChatMessage tm{ChatMessage::Role::kTool, out.content};
        tm.tool_call_id = call.id;
        tm.name = call.name;
        tm.tool_error = out.kind != tools::ToolOutcome::Kind::kOk;
        tm.images = std::move(out.images);
        if (spec.keep_image)
          for (auto& img : tm.images) img.path = spec.keep_image(img);
        ep.messages.push_back(std::move(tm));
        // Nothing the model does next can be judged fairly: the sandbox cannot run its tools.
        if (out.sandbox_broken) return finish(Termination::kSandboxBroken, out.reason);
      }
      continue;
    }
    if (said.content.find(kStopMarker) != std::string::npos || !user) return finish(Termination::kAgentDone);
    if (auto done = user_turn()) return *done;
  }
  return finish(Termination::kMaxTurns);
}

}  // namespace forge::agent
