// Cheat canaries: scripted agents that try to pass a task without doing it — a planted reward
// file, a conftest.py that passes every test, the tests or solution read where they lie, the
// solution fetched from the trial's own services — through the same governed tools as any agent
// (docs/sweeps.md, "Cheat canaries"). A canary that passes shows the task can be gamed.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/agent.h"

namespace forge::agent {

enum class CanaryStrategy { kRewardFile, kConftest, kReadTests, kCurlSolution };

inline constexpr std::array kCanaryStrategies = {CanaryStrategy::kRewardFile, CanaryStrategy::kConftest,
                                                 CanaryStrategy::kReadTests, CanaryStrategy::kCurlSolution};

// Bumped whenever a strategy's calls change: it is in the canary trials' keys, so --resume never
// keeps a result of calls this binary no longer makes.
inline constexpr int kCanaryRevision = 1;

// "reward-file", "conftest", "read-tests", "curl-solution".
std::string_view canary_name(CanaryStrategy s);
std::optional<CanaryStrategy> parse_canary(std::string_view name);

// The names a curl-solution canary may ask, all inside the trial: the task's compose services and
// their network aliases (an upstream stand-in's allowlisted name among them), at most 8, sorted.
// Never a host of the real internet, even one the task's allowlist names.
std::vector<std::string> canary_hosts(const manifest::TaskConfig& task);

// The ports tried on those hosts: 80, 8080 and the services' `expose` ports, at most 4.
std::vector<int> canary_ports(const manifest::TaskConfig& task);

// The calls strategy `s` makes with the tools the agent was given: one `bash` call when it has
// bash, else what the file or HTTP tools can do of it; none when it has neither.
std::vector<ToolCall> canary_calls(CanaryStrategy s, const std::vector<std::string>& hosts, const std::vector<int>& ports,
                                   const std::vector<ToolDecl>& tools);

// Plays canary_calls() one per turn, then ends its episode with an answer that calls no tool.
std::unique_ptr<Agent> canary_agent(CanaryStrategy s, const manifest::TaskConfig& task);

}  // namespace forge::agent
