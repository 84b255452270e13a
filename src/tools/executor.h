// ToolExecutor: the one path every tool call of a trial takes, whoever calls and whatever the tool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/log.h"
#include "core/result.h"
#include "tools/arguments.h"
#include "tools/rate_limit.h"
#include "tools/schema.h"
#include "tools/tool.h"

namespace forge::tools {

inline constexpr std::size_t kDefaultOutputCap = 64 * 1024;

struct ToolOutcome {
  enum class Kind { kOk, kRefused, kFailed, kTimeout };
  Kind kind = Kind::kOk;
  std::string content;  // exactly what the model receives: the output, or "Error: <reason>"
  std::string reason;   // why it is not kOk, without "Error: "; empty for kOk
  Millis elapsed{0};
  bool truncated = false;  // content was cut to the output cap
  std::vector<ImagePart> images;  // kOk only: images the tool returned (tool.h CallContext)
  // kFailed because the sandbox's own helper cannot run (Errc::kBroken): the episode ends there
  // as the sandbox's failure, not the model's.
  bool sandbox_broken = false;
};

const char* outcome_name(ToolOutcome::Kind kind);  // "ok" | "refused" | "failed" | "timeout"

// One call as logs and trajectories keep it: every text already redacted.
struct CallRecord {
  Actor actor = Actor::kAgent;
  std::string tool;       // as the model named it (made printable, clipped)
  std::string arguments;  // the canonical arguments (tools/arguments.h), or the excerpt of refused ones; redacted
  ToolOutcome::Kind outcome = ToolOutcome::Kind::kOk;
  std::string content;  // redacted
  std::string reason;   // redacted
  Millis elapsed{0};
  bool truncated = false;
};

struct ToolStats {
  std::uint64_t calls = 0, ok = 0, refused = 0, failed = 0, timeouts = 0;
};

struct ExecutorConfig {
  std::vector<std::shared_ptr<Tool>> tools;                 // what exists; names must be unique
  std::vector<std::string> agent_enabled;                   // tools.agent.enabled, in the order advertised
  std::vector<std::string> user_enabled;                    // tools.user.enabled
  std::map<std::string, ToolPolicy, std::less<>> policies;  // tools.policies; others get ToolPolicy{}
  std::size_t output_cap = kDefaultOutputCap;               // bytes of output the model sees
  Logger* log = nullptr;
  // Called once per call, after it ends, on the calling thread; must be thread-safe if calls are
  // concurrent. An exception from it is logged and swallowed.
  std::function<void(const CallRecord&)> on_record;
  RateLimiter::Now now;  // the rate limits' clock; empty: Clock::now
};

// Cuts `text` to at most `cap` bytes at a UTF-8 boundary and appends
// "\n[output truncated: N bytes omitted]". Returns whether it cut.
bool cap_output(std::string& text, std::size_t cap);

// "50 ms" below a second, otherwise seconds: "2 s", "2.5 s".
std::string format_duration(Millis d);

class ToolExecutor {
 public:
  // Refuses duplicate tool names, a schema that does not compile strictly (CompiledSchema),
  // an enabled name or a policy naming a tool that does not exist, and a nonsensical policy.
  static Result<std::unique_ptr<ToolExecutor>> create(ExecutorConfig config);

  // Never throws. Checks, in order: the tool exists, it is enabled for `actor`, the arguments
  // were accepted in canonical form (canonical_arguments; "" counts as {}), they match the
  // schema, the rate limits allow one more call; then runs it under its policy's deadline and
  // caps the output. Anything but success comes back as content "Error: <reason>", is counted,
  // and the trial goes on. The tool and the record get the canonical document, never `sent`.
  ToolOutcome call(Actor actor, std::string_view name, std::string_view sent);
  // The same for arguments already in canonical form (or refused), as the agent loop holds them.
  ToolOutcome call(Actor actor, std::string_view name, const ToolArguments& arguments);

  // What to advertise to the model for `actor`: its enabled tools, in the configured order.
  std::vector<ToolSpec> specs(Actor actor) const;

  std::map<std::string, ToolStats> stats() const;  // per registered tool
  ToolStats totals() const;                        // all calls, including unknown names

 private:
  struct Entry {
    std::shared_ptr<Tool> tool;
    CompiledSchema schema;
    ToolPolicy policy;
    ToolStats stats;
  };

  explicit ToolExecutor(ExecutorConfig config);
  ToolOutcome attempt(Actor actor, std::string_view name, const ToolArguments& arguments, Entry** entry);
  ToolOutcome invoke(Entry& entry, const std::string& name, const json::Value& args);
  void finish(Actor actor, std::string_view name, const ToolArguments& arguments, Entry* entry, ToolOutcome& outcome,
              Clock::time_point start);
  const std::vector<std::string>& enabled(Actor actor) const;

  ExecutorConfig config_;
  std::map<std::string, Entry, std::less<>> tools_;
  mutable std::mutex mu_;  // guards the limiters, every Entry::stats and totals_
  // One budget per actor: the scripted user's calls never spend the agent's rate limits (a user
  // simulator could otherwise make the model fail), nor the agent's the user's.
  RateLimiter agent_limiter_, user_limiter_;
  ToolStats totals_;
};

}  // namespace forge::tools
