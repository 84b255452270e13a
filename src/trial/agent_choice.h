// Which agent plays a trial: an LLM (a run-config model entry), the oracle (the task's reference
// solution through the agent's tool path), a replayed trajectory, a no-op, or a cheat canary
// (`run --canary`, agent/canary.h).
#pragma once

#include <string>

#include "agent/canary.h"

namespace forge::trial {

struct AgentChoice {
  enum class Kind { kLlm, kOracle, kReplay, kNoop, kCanary } kind = Kind::kOracle;
  std::string model_key = "agent";  // for kLlm: the run config's models entry
  std::string replay_path;          // for kReplay
  std::string model_name;           // for kLlm: "provider/name", shown in labels
  std::string spec;                 // as given on the command line ("oracle", "llm:judge", …)
  agent::CanaryStrategy canary = agent::CanaryStrategy::kRewardFile;  // for kCanary
  // "oracle", "replay", "noop", "llm:<models key>" (or "llm:provider/name" as given): the config key,
  // so one model at two temperatures is two agents; "canary:<strategy>" (results/canary.h reads the
  // prefix to keep canaries out of every agent's numbers).
  std::string label() const;
  static AgentChoice canary_of(agent::CanaryStrategy s);
};

}  // namespace forge::trial
