// The tool executor: refusals, validation, rate limits, deadline, output cap, counters, records.
#include "tools/executor.h"

#include <algorithm>
#include <cctype>
#include <exception>
#include <optional>
#include <utility>

#include "core/limits.h"
#include "core/strings.h"
#include "tools/redact.h"

namespace forge::tools {

namespace {

using Kind = ToolOutcome::Kind;

const char* actor_word(Actor a) { return a == Actor::kAgent ? "agent" : "user"; }

// Function-calling APIs accept these names only (OpenAI: ^[a-zA-Z0-9_-]{1,64}$).
bool valid_tool_name(std::string_view n) {
  return !n.empty() && n.size() <= 64 && std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

ToolOutcome refuse(std::string reason) {
  ToolOutcome o;
  o.kind = Kind::kRefused;
  o.reason = std::move(reason);
  return o;
}

// Deduplicates and checks that every enabled name exists.
Status check_enabled(std::vector<std::string>& names, const char* actor,
                     const std::map<std::string, std::shared_ptr<Tool>, std::less<>>& known) {
  std::vector<std::string> unique;
  for (auto& n : names) {
    if (!known.count(n))
      return fail(Errc::kInvalid, std::string("tools.") + actor + ".enabled: unknown tool '" + printable(n) + "'");
    if (std::find(unique.begin(), unique.end(), n) == unique.end()) unique.push_back(n);
  }
  names = std::move(unique);
  return {};
}

}  // namespace

const char* outcome_name(Kind kind) {
  switch (kind) {
    case Kind::kOk:
      return "ok";
    case Kind::kRefused:
      return "refused";
    case Kind::kFailed:
      return "failed";
    case Kind::kTimeout:
      return "timeout";
  }
  return "?";
}

bool cap_output(std::string& text, std::size_t cap) {
  if (text.size() <= cap) return false;
  std::size_t n = cap;
  // Back off continuation bytes (10xxxxxx): the model's API wants valid UTF-8.
  for (int i = 0; i < 3 && n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80; ++i) --n;
  const std::size_t omitted = text.size() - n;
  text.resize(n);
  text += "\n[output truncated: " + std::to_string(omitted) + " bytes omitted]";
  return true;
}

std::string format_duration(Millis d) {
  const auto ms = d.count();
  if (ms < 1000) return std::to_string(ms) + " ms";
  std::string s = std::to_string(ms / 1000);
  if (ms % 1000) {
    std::string frac = std::to_string(1000 + ms % 1000).substr(1);  // three digits, zero-padded
    while (frac.back() == '0') frac.pop_back();
    s += "." + frac;
  }
  return s + " s";
}

ToolExecutor::ToolExecutor(ExecutorConfig config) : config_(std::move(config)), agent_limiter_(config_.now), user_limiter_(config_.now) {}

Result<std::unique_ptr<ToolExecutor>> ToolExecutor::create(ExecutorConfig config) {
  std::map<std::string, std::shared_ptr<Tool>, std::less<>> known;
  std::map<std::string, CompiledSchema, std::less<>> schemas;
  for (const auto& tool : config.tools) {
    if (!tool) return fail(Errc::kInvalid, "a tool to register is null");
    const ToolSpec& spec = tool->spec();
    if (!valid_tool_name(spec.name))
      return fail(Errc::kInvalid,
                  "tool name '" + printable(spec.name) + "' is not valid (1 to 64 letters, digits, '_' or '-')");
    if (known.count(spec.name)) return fail(Errc::kConflict, "tool '" + spec.name + "' is registered twice");
    auto schema = CompiledSchema::compile(spec.parameters, spec.name);
    if (!schema) return schema.fail_with("registering tool '" + spec.name + "'");
    known.emplace(spec.name, tool);
    schemas.emplace(spec.name, std::move(*schema));
  }
  for (const auto& [name, p] : config.policies) {
    const std::string where = "tools.policies." + printable(name);
    if (!known.count(name)) return fail(Errc::kInvalid, where + ": unknown tool '" + printable(name) + "'");
    if (p.timeout <= Millis(0)) return fail(Errc::kInvalid, where + ": timeout_s must be positive");
    if (p.rate_limit < 0) return fail(Errc::kInvalid, where + ": rate_limit must not be negative");
    if (p.rate_per_minute < 0) return fail(Errc::kInvalid, where + ": rate_per_minute must not be negative");
  }
  if (auto ok = check_enabled(config.agent_enabled, "agent", known); !ok) return ok.fail();
  if (auto ok = check_enabled(config.user_enabled, "user", known); !ok) return ok.fail();
  if (config.output_cap == 0) return fail(Errc::kInvalid, "the tool output cap must be positive");

  std::unique_ptr<ToolExecutor> ex(new ToolExecutor(std::move(config)));
  for (auto& [name, tool] : known) {
    auto p = ex->config_.policies.find(name);
    ToolPolicy policy = p == ex->config_.policies.end() ? ToolPolicy{} : p->second;
    ex->tools_.emplace(name, Entry{tool, schemas.at(name), policy, {}});
  }
  return ex;
}

const std::vector<std::string>& ToolExecutor::enabled(Actor actor) const {
  return actor == Actor::kAgent ? config_.agent_enabled : config_.user_enabled;
}

std::vector<ToolSpec> ToolExecutor::specs(Actor actor) const {
  std::vector<ToolSpec> out;
  for (const auto& name : enabled(actor)) out.push_back(tools_.at(name).tool->spec());
  return out;
}

ToolOutcome ToolExecutor::call(Actor actor, std::string_view name, std::string_view sent) {
  return call(actor, name, canonical_arguments(sent));
}

ToolOutcome ToolExecutor::call(Actor actor, std::string_view name, const ToolArguments& arguments) {
  const Clock::time_point start = Clock::now();
  Entry* entry = nullptr;
  ToolOutcome o;
  try {
    o = attempt(actor, name, arguments, &entry);
    finish(actor, name, arguments, entry, o, start);
  } catch (...) {
    // Only the executor's own bookkeeping gets here (tools' exceptions are caught in invoke);
    // the model still gets an answer and the trial goes on.
    o = ToolOutcome{};
    o.kind = Kind::kFailed;
    o.reason = "internal error in the tool executor";
    o.content = "Error: " + o.reason;
    o.elapsed = elapsed_since(start);
  }
  return o;
}

ToolOutcome ToolExecutor::attempt(Actor actor, std::string_view name, const ToolArguments& arguments, Entry** entry) {
  const auto& on = enabled(actor);
  auto it = tools_.find(name);
  if (it == tools_.end())
    return refuse("unknown tool '" + printable(name) + "' (available: " + (on.empty() ? "none" : join(on, ", ")) + ")");
  *entry = &it->second;
  const std::string& tool = it->first;
  if (std::find(on.begin(), on.end(), name) == on.end())
    return refuse("tool '" + tool + "' is not enabled for the " + actor_word(actor));

  if (arguments.refused()) return refuse("arguments for '" + tool + "' " + arguments.refusal);
  // The canonical text parses as it did when it was made (the same limits, no key twice).
  json::Document args;
  if (auto bad = json::parse_document(args, arguments.text, limits::kMaxToolArgumentsBytes, json::kFullPrecision,
                                      limits::kMaxModelJsonDepth))
    return refuse("arguments for '" + tool + "' are not in canonical form: " + bad->reason);
  if (Status ok = it->second.schema.validate(args); !ok)
    return refuse("invalid arguments for '" + tool + "': " + ok.error().message);
  {
    std::lock_guard lock(mu_);
    // Charged before the call, so concurrent calls cannot overshoot the limit.
    RateLimiter& limiter = actor == Actor::kAgent ? agent_limiter_ : user_limiter_;
    if (Status ok = limiter.acquire(tool, it->second.policy); !ok) return refuse(ok.error().message);
  }
  return invoke(it->second, tool, args);
}

ToolOutcome ToolExecutor::invoke(Entry& entry, const std::string& tool, const json::Value& args) {
  ToolOutcome o;
  std::vector<ImagePart> images;
  const CallContext ctx{Deadline::in(entry.policy.timeout), &images};
  std::optional<Result<std::string>> r;
  std::string threw;
  try {
    r.emplace(entry.tool->call(args, ctx));
  } catch (const std::exception& e) {
    threw = e.what();
  } catch (...) {
    threw = "an exception of unknown type";
  }
  if (!r) {
    if (config_.log) config_.log->warn(redact_text("tool '" + tool + "' threw: " + printable(threw, 500)));
    o.kind = Kind::kFailed;
    o.reason = "internal error in tool '" + tool + "'";
    return o;
  }
  const bool late = ctx.deadline.expired();
  const std::string timed_out = "'" + tool + "' timed out after " + format_duration(entry.policy.timeout);
  if (!*r && r->error().code == Errc::kTimeout) {
    o.kind = Kind::kTimeout;
    o.reason = late ? timed_out : r->error().what();  // an earlier timeout of the tool's own
  } else if (late) {
    // The policy's budget is what counts: a result past the deadline is not handed over, so every
    // tool gets the same timeout whether or not it watches its deadline.
    if (config_.log) config_.log->warn("tool '" + tool + "' returned after its deadline; its result was discarded");
    o.kind = Kind::kTimeout;
    o.reason = timed_out;
  } else if (!*r) {
    o.kind = Kind::kFailed;
    o.sandbox_broken = r->error().code == Errc::kBroken;
    o.reason = r->error().what().empty() ? "tool '" + tool + "' failed" : r->error().what();
  } else {
    o.content = std::move(**r);
    o.images = std::move(images);
  }
  return o;
}

void ToolExecutor::finish(Actor actor, std::string_view name, const ToolArguments& arguments, Entry* entry,
                          ToolOutcome& o, Clock::time_point start) {
  if (o.kind != Kind::kOk) o.content = "Error: " + o.reason;
  // A tool's bytes go to the model, the judge, checks.py and the trial's files, all of which need
  // UTF-8: a binary `cat` (or an agent's deliberate \xff) must not break any of them.
  o.content = valid_utf8(o.content);
  o.reason = valid_utf8(o.reason);
  o.truncated = cap_output(o.content, config_.output_cap);
  o.elapsed = elapsed_since(start);
  {
    std::lock_guard lock(mu_);
    for (ToolStats* s : {&totals_, entry ? &entry->stats : nullptr}) {
      if (!s) continue;
      ++s->calls;
      switch (o.kind) {
        case Kind::kOk:
          ++s->ok;
          break;
        case Kind::kRefused:
          ++s->refused;
          break;
        case Kind::kFailed:
          ++s->failed;
          break;
        case Kind::kTimeout:
          ++s->timeouts;
          break;
      }
    }
  }

  const std::string tool = printable(name);
  if (config_.log) {
    const LogLevel level = o.kind == Kind::kOk ? LogLevel::kDebug : LogLevel::kInfo;
    if (config_.log->level() <= level) {
      std::string line = "tool " + std::string(actor_word(actor)) + "/" + tool + " " +
                         printable(redact_json(arguments.text), 300) + ": " + outcome_name(o.kind) + " in " +
                         std::to_string(o.elapsed.count()) + " ms" + (o.truncated ? " (output truncated)" : "");
      if (o.kind != Kind::kOk) line += ": " + printable(redact_text(o.reason), 500);
      if (o.kind == Kind::kOk)
        config_.log->debug(line);
      else
        config_.log->info(line);
    }
  }
  if (config_.on_record) {
    CallRecord rec{
        actor,     tool,       redact_json(arguments.text), o.kind, redact_json(o.content), redact_text(o.reason),
        o.elapsed, o.truncated};
    try {
      config_.on_record(rec);
    } catch (const std::exception& e) {
      if (config_.log) config_.log->warn(std::string("tool call record sink failed: ") + e.what());
    } catch (...) {
      if (config_.log) config_.log->warn("tool call record sink failed");
    }
  }
}

std::map<std::string, ToolStats> ToolExecutor::stats() const {
  std::lock_guard lock(mu_);
  std::map<std::string, ToolStats> out;
  for (const auto& [name, e] : tools_) out.emplace(name, e.stats);
  return out;
}

ToolStats ToolExecutor::totals() const {
  std::lock_guard lock(mu_);
  return totals_;
}

}  // namespace forge::tools
