// The first wave's overlap (docs/sweeps.md "The first wave"): a trial whose sandbox is not ready
// at its turn pays up + setup before its agent's first turn. When that turn's request depends on
// nothing the sandbox produces, the model is asked while up and setup run; its tool calls still
// run only in the agent phase, once setup is done and the agent's network verified.
#include <algorithm>

#include "tools/toolbox.h"
#include "trial/browser_use.h"
#include "trial/json_db_use.h"
#include "trial/local_trial.h"
#include "trial/trial_env.h"
#include "trial/trial_run.h"

namespace forge::trial {

namespace {

// Only an LLM agent calls a model. Its request must be known before the sandbox: no tool that a
// running server declares (MCP over stdio or HTTP, a Python server), no browser (opened with the
// tools), no Harbor task (its system prompt names the workdir the stack gives, its steps switch
// users and instructions), no local executor.
bool may_overlap(const manifest::TaskConfig& task, const AgentChoice& choice) {
  const auto& tools = task.environment.tools;
  return choice.kind == AgentChoice::Kind::kLlm && !task.harbor && !runs_locally(task) && !tools.mcp_server &&
         tools.http_mcp_servers.empty() && !uses_browser(task);
}

// The agent's tools as open_tools will declare them, from the task alone: the built-ins (with the
// database and knowledge-base tools when the stack has their services). The agent phase checks
// the prediction against the tools opened and discards the turn on any difference.
Result<std::vector<ToolDecl>> predicted_decls(const manifest::TaskConfig& task, const std::string& trial_id) {
  const auto& env = task.environment;
  tools::BuiltinOptions b;  // no sandbox: these tools are only declared, never called
  if (env.compose.find("json-db")) b.db.trial = trial_id;
  if (!task.initial_state.rag_corpus_dir.empty() && env.compose.find("rag") && tool_enabled(env.tools, "search_kb"))
    b.rag.trial = trial_id;
  auto exec = tools::make_toolbox({env.tools, b, {}, nullptr, {}});
  if (!exec) return exec.fail();
  return agent::agent_decls(**exec);
}

}  // namespace

std::unique_ptr<FirstTurn> start_first_turn(const manifest::TaskConfig& task, int trial_index,
                                            const AgentChoice& choice, const TrialEnv& env) {
  if (!may_overlap(task, choice) || !env.models) return nullptr;
  auto spec = task_episode_spec(task, env);
  if (!agent::may_start_early(spec)) return nullptr;
  auto decls = predicted_decls(task, trial_id_of(task, trial_index));
  if (!decls) return nullptr;  // open_tools reports the same problem as today
  auto client = env.models(choice.model_key);
  if (!client) return nullptr;  // the agent phase reports it as today
  auto first = std::make_unique<FirstTurn>();
  first->agent = agent::llm_agent(*client);
  first->turn = std::make_unique<agent::EarlyTurn>(first->agent, spec, std::move(*decls));
  return first;
}

void TrialRun::adopt_first_turn(std::unique_ptr<FirstTurn> first) {
  if (!first) return;
  agent_ = std::move(first->agent);
  early_ = std::move(first->turn);
  note("INFO", "agent", "first turn asked while the sandbox is not ready");
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
