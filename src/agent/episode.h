// One trial's conversation: the agent and the user take turns, every tool call goes through the
// governed executor, and the episode ends for a recorded reason.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "agent/agent.h"
#include "agent/user_sim.h"
#include "core/slots.h"
#include "manifest/run_config.h"
#include "tools/executor.h"

namespace forge::agent {

class EarlyTurn;

// Why an episode ended. Infra failures (kInfraError) are retried by the sweep with a fresh
// sandbox and never count as model failures.
enum class Termination {
  kAgentDone,  // the agent said ###STOP###, or answered with no user simulator to reply
  kUserStop,   // the user simulator said ###STOP###
  kMaxTurns,
  kTimeout,           // the episode's deadline
  kStuck,             // the same tool call, or the same answer, over and over
  kBudgetExhausted,   // the run's budget would not cover the next call
  kModelError,        // the model's request was refused (context too long, malformed)
  kInfraError,        // provider 429/5xx after retries, sandbox or daemon failures
  kInterrupted,       // SIGINT
  kSandboxDestroyed,  // a container of the sandbox broke by the agent's own actions (set by the trial)
  kSandboxBroken,     // the sandbox's own tool helper could not run a call: not the agent's doing
};
const char* termination_name(Termination t);  // "agent_done", "user_stop", …

struct EpisodeSpec {
  std::string system_prompt;
  std::string initial_user_message;  // empty: the user simulator opens
  int max_turns = 50;
  Millis episode_timeout{1800000};
  Millis turn_timeout{60000};  // each LLM call, retries included
  manifest::StuckHeuristics stuck;
  Slots* exec_slots = nullptr;  // a sweep's limit on tool calls running at once; null: none
  // Starts forgectl's call ids (CallIntake), so episodes joined into one transcript (the steps of
  // a multi-step task) never share one: "s2-" gives "s2-fc-1", ….
  std::string call_id_prefix;
  // Called once for each image a tool returns, as the tool returns it (before the model's next
  // turn, so a trial that ends midway has kept it already): the path the trial's record keeps it
  // at, or empty when it is not kept. Empty function: images are kept nowhere but in memory.
  std::function<std::string(const ImagePart&)> keep_image;
  // The first turn's model call, started before the sandbox was ready (early_turn.h), with the
  // same opening messages and tool declarations: the episode takes its answer as its first turn
  // and counts its time from when it started. Null: the first turn is called here.
  EarlyTurn* early = nullptr;
};

struct Episode {
  // system, user, assistant, tool: each call with forgectl's id and its canonical arguments (or
  // the refusal and an excerpt), each tool result naming the call by forgectl's id
  std::vector<ChatMessage> messages;
  Termination termination = Termination::kMaxTurns;
  std::string error;  // for kModelError / kInfraError: what went wrong
  // A key or account problem (401/402/403) or a wrong base_url or model (404): every other trial
  // would fail the same way, so the run stops instead of retrying.
  bool stops_run = false;
  Usage agent_usage, user_usage;
  double agent_cost_usd = 0, user_cost_usd = 0;
  bool cost_known = true;  // false when some call's price was unknown
  int agent_calls = 0, user_calls = 0, turns = 0;
  Millis elapsed{0};
};

// `user` may be null (the agent runs alone: an answer without tool calls ends the episode). Tool
// calls are logged through the executor's record sink, which the caller owns.
Episode run_episode(Agent& agent, UserSimulator* user, tools::ToolExecutor& executor, const EpisodeSpec& spec,
                    const std::atomic<int>* interrupted = nullptr);

}  // namespace forge::agent
