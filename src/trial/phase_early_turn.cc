// The first wave's overlap (docs/sweeps.md "The first wave"): a trial with no sandbox prepared
// ahead pays up + setup before its agent's first turn. When that turn's request depends on nothing
// the sandbox produces, the model is asked while up and setup run; its tool calls still run only
// in the agent phase, once setup is done and the agent's network verified.
#include "trial/trial_run.h"

#include <algorithm>

#include "agent/early_turn.h"
#include "tools/toolbox.h"
#include "trial/browser_use.h"
#include "trial/json_db_use.h"
#include "trial/local_trial.h"
#include "trial/trial_env.h"

namespace forge::trial {

// Only an LLM agent calls a model. Its request must be known before the sandbox: no tool that a
// running server declares (MCP over stdio or HTTP, a Python server), no browser (opened with the
// tools), no Harbor task (its system prompt names the workdir the stack gives, its steps switch
// users), no local executor.
bool TrialRun::may_overlap_first_turn() const {
  const auto& tools = task_.environment.tools;
  return choice_.kind == AgentChoice::Kind::kLlm && !task_.harbor && !runs_locally(task_) && !tools.mcp_server &&
         tools.http_mcp_servers.empty() && !uses_browser(task_);
}

// The agent's tools as open_tools will declare them, from the task alone: the built-ins (with the
// database and knowledge-base tools when the stack has their services). agent() checks the
// prediction against the opened tools and discards the turn on any difference.
Result<std::vector<ToolDecl>> TrialRun::predicted_decls() const {
  const auto& env = task_.environment;
  tools::BuiltinOptions b;  // no sandbox: these tools are only declared, never called
  if (env.compose.find("json-db")) b.db.trial = trial_id_;
  if (!task_.initial_state.rag_corpus_dir.empty() && env.compose.find("rag") && tool_enabled(env.tools, "search_kb"))
    b.rag.trial = trial_id_;
  auto exec = tools::make_toolbox({env.tools, b, {}, nullptr, {}});
  if (!exec) return exec.fail();
  return agent::agent_decls(**exec);
}

void TrialRun::start_early_turn() {
  if (!may_overlap_first_turn()) return;
  auto spec = episode_spec();
  if (!agent::may_start_early(spec)) return;
  auto decls = predicted_decls();
  if (!decls) return;  // open_tools reports the same problem as today
  auto made = make_agent();
  if (!made) return;  // agent() reports it as today
  agent_ = std::shared_ptr<agent::Agent>(std::move(*made));
  early_ = std::make_unique<agent::EarlyTurn>(agent_, spec, std::move(*decls));
  note("INFO", "agent", "first turn started while the sandbox is brought up");
}

// At the agent phase: the early turn if it was asked what the episode would ask, with how long it
// ran before the sandbox was ready (phases_s.first_turn_overlap); null otherwise.
agent::EarlyTurn* TrialRun::join_early_turn() {
  if (!early_) return nullptr;
  const auto ready = Clock::now();
  const auto ran_until = std::min(early_->ended().value_or(ready), ready);
  r_.phases["first_turn_overlap"] = std::chrono::duration_cast<Millis>(ran_until - early_->started());
  if (agent::same_decls(early_->decls(), agent::agent_decls(*tools_.executor))) return early_.get();
  discard_early_turn("the tools opened are not those it was asked with");
  return nullptr;
}

// The early turn is not the episode's: its tokens and cost go to this attempt's log, never to any
// episode's totals (a retry asks again, on its own account). A call still running is left to end
// by its own deadline; its cost is then unknown here (the run's budget still counts it).
void TrialRun::discard_early_turn(const std::string& why) {
  if (!early_) return;
  std::map<std::string, std::string> ctx = {{"reason", why}};
  if (early_->done()) {
    auto r = early_->take(nullptr);
    if (*r) {
      ctx["input_tokens"] = std::to_string((*r)->usage.input_tokens);
      ctx["output_tokens"] = std::to_string((*r)->usage.output_tokens);
      if ((*r)->cost_usd) ctx["cost_usd"] = std::to_string(*(*r)->cost_usd);
    }
  } else {
    ctx["still_running"] = "true";
  }
  note("WARNING", "agent", "first turn asked before the sandbox was ready discarded: " + why, std::move(ctx));
  early_.reset();
  agent_.reset();
}

}  // namespace forge::trial
