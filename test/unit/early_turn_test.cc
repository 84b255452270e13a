// The first wave's overlap (docs/sweeps.md "The first wave"): an LLM agent's first model call runs
// while its sandbox is brought up, its tool calls only once the sandbox is ready; a trial whose
// sandbox fails discards the turn without counting it; a task whose tools come from a running
// server keeps today's order.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "agent/early_turn.h"
#include "agent/episode.h"
#include "core/log.h"
#include "engine/client.h"
#include "manifest/task_parse.h"
#include "support/fake_llm_server.h"
#include "support/fake_transport.h"
#include "support/manifest_helpers.h"
#include "tools/executor.h"
#include "trial/trial.h"

using namespace forge;
using namespace forge::test;
using namespace std::chrono_literals;

namespace {

// A model whose first answer (one tool call) waits until the test lets it go; later ones say done.
class GatedModel : public agent::Agent {
 public:
  std::string kind() const override { return "llm"; }
  Result<ChatResponse> next(const std::vector<ChatMessage>& messages, const std::vector<ToolDecl>& decls,
                            Deadline) override {
    std::unique_lock lock(mu_);
    ++calls;
    asked_with = decls.size();
    if (calls > 1) return answer(ChatMessage{ChatMessage::Role::kAssistant, "done"});
    opening = messages.size();
    first_started = Clock::now();
    cv_.notify_all();
    cv_.wait(lock, [&] { return released_; });
    ChatMessage m{ChatMessage::Role::kAssistant, ""};
    m.tool_calls = {{"call_1", "note", "{}"}};
    return answer(std::move(m));
  }
  bool wait_started(std::chrono::milliseconds d) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, d, [&] { return calls > 0; });
  }
  void release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  int calls = 0;
  std::size_t opening = 0, asked_with = 0;
  Clock::time_point first_started;

 private:
  static ChatResponse answer(ChatMessage m) {
    ChatResponse r;
    r.message = std::move(m);
    r.usage.input_tokens = 100;
    r.usage.output_tokens = 10;
    r.cost_usd = 0.5;
    return r;
  }
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
};

// A tool that notes when it ran.
class TimedTool : public tools::Tool {
 public:
  const tools::ToolSpec& spec() const override { return spec_; }
  Result<std::string> call(const json::Value&, const tools::CallContext&) override {
    ran_at.push_back(Clock::now());
    return std::string("noted");
  }
  std::vector<Clock::time_point> ran_at;

 private:
  tools::ToolSpec spec_{"note", "notes", R"({"type":"object","properties":{},"additionalProperties":false})"};
};

// A tool executor whose agent has the one tool `note`.
std::unique_ptr<tools::ToolExecutor> note_executor(std::shared_ptr<tools::Tool> tool) {
  tools::ExecutorConfig cfg;
  cfg.tools = {std::move(tool)};
  cfg.agent_enabled = {"note"};
  auto ex = tools::ToolExecutor::create(cfg);
  REQUIRE(ex);
  return std::move(*ex);
}

}  // namespace

TEST_CASE("early turn: the first model call runs before the sandbox is ready; its tool call only after") {
  auto tool = std::make_shared<TimedTool>();
  auto ex = note_executor(tool);
  auto model = std::make_shared<GatedModel>();
  agent::EpisodeSpec spec;
  spec.system_prompt = "be brief";
  spec.initial_user_message = "note it";
  spec.max_turns = 4;
  REQUIRE(agent::may_start_early(spec));

  agent::EarlyTurn early(model, spec, agent::agent_decls(*ex));
  REQUIRE(model->wait_started(5s));   // the model is asked while the "sandbox" is not ready
  std::this_thread::sleep_for(50ms);  // up and setup
  const auto ready = Clock::now();
  CHECK(tool->ran_at.empty());
  model->release();
  spec.early = &early;
  auto ep = agent::run_episode(*model, nullptr, *ex, spec);

  CHECK(model->first_started < ready);
  REQUIRE(tool->ran_at.size() == 1);
  CHECK(tool->ran_at[0] >= ready);
  CHECK(model->opening == 2);  // system + user, as the episode opens
  CHECK(model->asked_with == 1);
  CHECK(model->calls == 2);  // the early call was the first turn, not asked again
  CHECK(ep.agent_calls == 2);
  CHECK(ep.agent_usage.input_tokens == 200);
  CHECK(ep.agent_cost_usd == doctest::Approx(1.0));
  // The transcript: system, user, the first answer once, its tool result, "done".
  REQUIRE(ep.messages.size() == 5);
  CHECK(ep.messages[2].tool_calls.size() == 1);
  CHECK(ep.messages[3].role == ChatMessage::Role::kTool);
  CHECK(ep.messages[4].content == "done");
  // The overlapped time is the episode's: counted from the early call's start.
  CHECK(ep.elapsed >= std::chrono::duration_cast<Millis>(ready - early.started()));
}

TEST_CASE("early turn: a SIGINT while the model is still answering ends the episode without waiting for it") {
  auto ex = note_executor(std::make_shared<TimedTool>());
  auto model = std::make_shared<GatedModel>();
  agent::EpisodeSpec spec;
  spec.initial_user_message = "note it";
  std::atomic<int> interrupted{0};
  {
    agent::EarlyTurn early(model, spec, agent::agent_decls(*ex));
    REQUIRE(model->wait_started(5s));
    spec.early = &early;
    std::thread sigint([&] {
      std::this_thread::sleep_for(50ms);
      interrupted = 1;
    });
    const auto t0 = Clock::now();
    auto ep = agent::run_episode(*model, nullptr, *ex, spec, &interrupted);
    sigint.join();
    CHECK(ep.termination == agent::Termination::kInterrupted);
    CHECK(ep.agent_calls == 0);
    CHECK(Clock::now() - t0 < 2s);
  }  // the call still runs: left behind, never waited for
  model->release();
}

TEST_CASE("early turn: an answer already paid for is counted when an interrupt ends the episode; its call never runs") {
  auto tool = std::make_shared<TimedTool>();
  auto ex = note_executor(tool);
  auto model = std::make_shared<GatedModel>();
  model->release();
  agent::EpisodeSpec spec;
  spec.initial_user_message = "note it";
  agent::EarlyTurn early(model, spec, agent::agent_decls(*ex));
  for (auto until = Clock::now() + 5s; !early.done() && Clock::now() < until;) std::this_thread::sleep_for(10ms);
  std::atomic<int> interrupted{1};
  spec.early = &early;
  auto ep = agent::run_episode(*model, nullptr, *ex, spec, &interrupted);
  CHECK(ep.termination == agent::Termination::kInterrupted);
  CHECK(ep.agent_calls == 1);
  CHECK(ep.agent_usage.input_tokens == 100);
  CHECK(tool->ran_at.empty());
}

TEST_CASE("early turn: an episode whose tools differ from those the call was asked with asks again") {
  auto ex = note_executor(std::make_shared<TimedTool>());
  auto early_model = std::make_shared<GatedModel>();
  agent::EpisodeSpec spec;
  spec.initial_user_message = "note it";
  spec.max_turns = 1;
  agent::EarlyTurn early(early_model, spec, {});  // asked with no tools
  early_model->release();
  GatedModel fresh;
  fresh.release();
  spec.early = &early;
  auto ep = agent::run_episode(fresh, nullptr, *ex, spec);
  CHECK(fresh.calls == 1);
  CHECK(fresh.asked_with == 1);
}

namespace {

// One container trial of an LLM agent against an engine that answers every request 404 (up
// fails: an infra error), its model the fake provider, its up slot held by the test until let go.
struct FailingSandboxRun {
  TempFiles files{"forgectl-early-turn-"};
  std::ostringstream log_text;
  Logger log{log_text, LogLevel::kInfo};
  std::shared_ptr<FakeTransport> fake = std::make_shared<FakeTransport>();
  engine::Client docker{fake};
  manifest::RunConfig cfg;
  LlmHarness llm;
  trial::Admission admission{0, 1, 0, 0, 0};
  trial::TrialEnv env;
  manifest::TaskConfig task;

  FailingSandboxRun() {
    env.docker = &docker;
    env.run = &cfg;
    env.run_id = "unit";
    env.log = &log;
    env.admission = &admission;
    env.host.host_firewall = false;  // the fake engine is not on this host
    // The daemon gone: the trial's infra error, which the sweep retries with a fresh sandbox.
    for (auto m : {engine::Method::kGet, engine::Method::kPost})
      fake->on_error(m, "/", Error{Errc::kUnavailable, "fake: the daemon is gone", {}});
    env.models = [this](const std::string&) -> Result<std::shared_ptr<agent::LlmClient>> {
      return std::shared_ptr<agent::LlmClient>(llm.client("openai", "gpt-4o"));
    };
  }

  std::string write_task(const std::string& tools) {
    files.write("task/mcp_server.py", "print('server')\n");
    files.write("task/system.md", "You are careful.\n");
    files.write("task/grading.yaml",
                "state_checks:\n  jsonpaths:\n    - {path_glob: \"/work/answer.txt\", contains: \"42\"}\n");
    return files.write("task/task.yaml", R"(task_id: early_task
name: "An early task"
category: unit
description: "Its sandbox never comes up."
system_prompt: system.md
grading: grading.yaml
initial_user_message: "Write answer.txt."
environment: {stack: none}
)" + tools + R"(user_simulator:
  mode: scripted
  scripted_flow:
    - {default: "###STOP###"}
)");
  }

  // Runs the trial on a thread while the test holds the up slot, lets it go after `hold`.
  trial::TrialResult run(const std::string& task_yaml, std::chrono::milliseconds hold) {
    auto t = manifest::load_task(task_yaml);
    REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
    task = std::move(*t);
    trial::AgentChoice choice;
    choice.kind = trial::AgentChoice::Kind::kLlm;
    choice.model_key = "m";
    trial::TrialResult r;
    std::optional<Slots::Hold> up_slot;
    up_slot.emplace(&admission.up);
    std::thread runner([&] { r = trial::run_trial(task, 0, 1, choice, env); });
    std::this_thread::sleep_for(hold);
    model_requests_while_held = llm.server.requests().size();
    up_slot.reset();
    runner.join();
    return r;
  }
  std::size_t model_requests_while_held = 0;
};

}  // namespace

TEST_CASE("early turn: a failed sandbox discards the first turn, counted in no episode, logged with its tokens") {
  FailingSandboxRun run;
  run.llm.server.push(200, fake_llm::openai_text("I will write it.", 321, 7));
  auto r = run.run(run.write_task("tools:\n  agent: {enabled: [bash, read_file]}\n"), 500ms);
  INFO(r.error);
  CHECK(run.model_requests_while_held == 1);  // asked before up could even start
  CHECK(r.outcome == results::Outcome::kInfraError);
  CHECK(r.episode.agent_calls == 0);
  CHECK(r.episode.agent_usage.input_tokens == 0);
  CHECK(r.episode.messages.empty());
  CHECK(r.phases.count("first_turn_overlap") == 0);
  const std::string logged = run.log_text.str();
  INFO(logged);
  bool noted = false;
  for (const auto& e : r.events)
    if (e.message.find("discarded") != std::string::npos) {
      noted = true;
      CHECK(e.context.at("input_tokens") == "321");
      CHECK(e.context.at("output_tokens") == "7");
    }
  CHECK(noted);
}

TEST_CASE("early turn: a task whose tools come from its MCP server is not asked before its sandbox") {
  FailingSandboxRun run;
  run.llm.server.push(200, fake_llm::openai_text("never", 5, 5));
  auto r = run.run(run.write_task("tools:\n  agent:\n    enabled: [bash]\n    mcp_server: mcp_server.py\n"), 300ms);
  CHECK(r.outcome == results::Outcome::kInfraError);
  CHECK(run.model_requests_while_held == 0);
  CHECK(run.llm.server.requests().empty());
}
