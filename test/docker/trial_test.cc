// Full trials against the real daemon, driven by a local scripted LLM server speaking the OpenAI
// and Anthropic protocols: tool calls run in a real runner, grading runs on the host and in a
// grader container, and the run's promises hold — retries only for what is transient, infra
// failures never counted as the model's, the budget checked before each call, no grading asset in
// any container during the agent phase, no API key in any container or output file.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <yaml-cpp/yaml.h>

#include "agent/budget.h"
#include "engine/containers.h"
#include "engine/exec.h"
#include "engine/images.h"
#include "manifest/task_parse.h"
#include "results/trial_record.h"
#include "stack/labels.h"
#include "support/fs_scan.h"
#include "support/run_files.h"
#include "support/stack_env.h"
#include "support/trial_rig.h"
#include "sweep/docker_runner.h"
#include "sweep/run.h"
#include "trial/trial.h"
#include "trial/trial_files.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

// Split so that no command line or tool argument carries the marker itself.
const std::string kMarkerHead = "GRADING-ASSET-", kMarkerTail = "7f3a91";
const std::string kMarker = kMarkerHead + kMarkerTail;

// A task whose grading assets (grading.yaml, tests/, solution/) all carry kMarker; it passes when
// answer.txt holds 42 (a workspace file check on the host and a test script in the grader).
std::string write_probe_task(const TempDir& dir, const std::string& task_id) {
  fs::create_directories(fs::path(dir.path()) / "tests");
  fs::create_directories(fs::path(dir.path()) / "solution");
  dir.write("task.yaml", "task_id: " + task_id +
                             "\nname: probe\ncategory: test\ndescription: \"Write 42.\"\n"
                             "initial_user_message: \"Write answer.txt containing 42.\"\n"
                             "tools:\n  agent: {enabled: [bash, write_file, read_file]}\n  user: {enabled: []}\n"
                             "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"Thanks. ###STOP###\"}\n"
                             "grading: grading.yaml\n"
                             "solution: {script: solution/solve.sh}\n");
  dir.write("grading.yaml", "# " + kMarker +
                                "\n"
                                "combine: {method: weighted, pass_threshold: 0.99}\n"
                                "state_checks:\n  jsonpaths:\n"
                                "    - {path_glob: \"/env/fs/agent-visible/answer.txt\", contains_ci: \"42\"}\n"
                                "custom_checks:\n  command: \"sh /tests/test.sh\"\n");
  dir.write("tests/test.sh", "# " + kMarker + "\ngrep -q 42 answer.txt\n");
  dir.write("solution/solve.sh", "# " + kMarker + "\necho 42 > answer.txt\n");
  return dir.path() + "/task.yaml";
}

manifest::TaskConfig load(const std::string& path) {
  auto t = manifest::load_task(path);
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  return std::move(*t);
}

// Resolves models against the fake server; infra failures retried once.
struct ProbeRig : LlmTrialRig {
  ProbeRig(const std::string& provider, const std::string& name, std::optional<double> budget_usd = {})
      : LlmTrialRig(provider, name, budget_usd) {
    cfg.turn_timeout = Millis(30000);
    cfg.max_attempt_retries = 1;
  }
};

std::string tool_message(const json::Document& body, std::size_t from_end) {
  const auto& msgs = body["messages"];
  REQUIRE(msgs.Size() > from_end);
  const auto& m = msgs[msgs.Size() - 1 - from_end];
  return m.HasMember("content") && m["content"].IsString() ? m["content"].GetString() : "";
}

}  // namespace

// One `forgectl run` in-process: the plan of `tasks` × one LLM agent × `trials`, run through the
// Docker runner into `out`.
Result<sweep::RunSummary> sweep_once(ProbeRig& rig, const std::string& tasks, int trials, const std::string& out,
                                     std::ostream& progress, bool resume = false) {
  sweep::PlanInput in;
  in.task_paths = {tasks};
  in.trials = trials;
  in.agents = {trial::AgentChoice{trial::AgentChoice::Kind::kLlm, "agent", "", "openai/gpt-4o"}};
  in.run = &rig.cfg;
  auto& c = *docker_env().client;
  auto plan = sweep::make_plan(in, [&c](const std::string& ref) -> Result<std::string> {
    auto img = engine::inspect_image(c, ref);
    if (!img) return img.fail();
    return img->id;
  });
  if (!plan) return plan.fail();
  auto dir = results::RunDir::open(out, [](std::string_view t) { return std::string(t); });
  if (!dir) return dir.fail();
  auto hosts = sweep::HostPool::connect({}, docker_env().host);
  if (!hosts) return hosts.fail();
  trial::Admission admission(1, 4, 4, 0, 2);
  sweep::DockerTrialRunner runner(rig.env, **hosts, admission, *dir, (*plan)->networks_per_trial);
  sweep::RunOptions o;
  o.retries = rig.cfg.max_attempt_retries;
  o.resume = resume;
  o.run_id = rig.env.run_id;
  o.budget = rig.budget.get();
  return sweep::run_sweep(o, **plan, runner, *dir, {}, progress);
}

TEST_CASE("trial (OpenAI protocol): 429 retried, malformed arguments answered as a tool error, graded pass; "
          "no grading asset in any container and no key anywhere during the agent phase") {
  TempDir task_dir;
  auto task = load(write_probe_task(task_dir, "probe_openai"));
  ProbeRig rig("openai", "gpt-4o");
  rig.cfg.turn_timeout = Millis(600000);  // the held turn outlives the scans of every container, however slow
  auto& s = rig.h.server;
  s.push({429, {{"Retry-After", "0"}}, fake_llm::openai_error("slow down", "rate_limit_exceeded", "requests")});
  s.push(200, fake_llm::openai_tool_call("call_1", "bash",
                                         json::Writer()
                                             .begin_object()
                                             .field("command", fs_scan_command(kMarkerHead, kMarkerTail) + "; env")
                                             .end_object()
                                             .take()));
  // Held until released: the test searches every container of the trial meanwhile.
  s.push({200, {}, fake_llm::openai_tool_call("call_2", "write_file", R"({"path" "answer.txt"})"), Millis(0), true});
  s.push(200, fake_llm::openai_tool_call("call_3", "write_file", R"({"path": "answer.txt", "content": "42\n"})"));
  s.push(200, fake_llm::openai_text("Done: answer.txt holds 42."));

  trial::TrialResult r;
  std::thread trial([&] { r = rig.run_llm(task); });
  // The agent phase: the third request is waiting for its answer.
  bool in_agent_phase = rig.wait_for_requests(3, std::chrono::seconds(90)) && s.requests().size() == 3;
  std::vector<std::pair<std::string, std::string>> scans;  // container name, scan output
  std::vector<std::string> envs;
  if (in_agent_phase) {
    // The grader made ahead may still be created but not started (the first turn, asked while the
    // sandbox came up, brings the agent phase here sooner): scanned once it runs.
    auto cs = rig.containers();
    for (auto until = Clock::now() + std::chrono::seconds(60);
         Clock::now() < until && std::any_of(cs.begin(), cs.end(), [](const auto& c) { return c.state != "running"; });
         cs = rig.containers())
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    scans = scan_containers(cs, kMarker);
    for (const auto& c : cs) {
      auto info = engine::inspect_container(*docker_env().client, c.id);
      REQUIRE(info.has_value());
      for (const auto& e : info->env) envs.push_back(e);
    }
  }
  in_agent_phase = in_agent_phase && s.requests().size() == 3;
  s.release();
  trial.join();
  CAPTURE(r.error);

  REQUIRE_MESSAGE(in_agent_phase, "the scan must happen while the agent phase waits on the model");
  CHECK(scans.size() >= 2);  // the runner and json-db at least
  for (const auto& [name, out] : scans) check_scan_clean(name, out);
  for (const auto& e : envs) CHECK(e.find(LlmHarness::kOpenAiKey) == std::string::npos);

  // What the model saw from inside the runner: the same search, and an environment without keys.
  std::string seen = tool_message(rig.h.body(2), 0);
  CHECK(seen.find("SCAN-DONE") != std::string::npos);
  CHECK(seen.find("HIT:") == std::string::npos);
  CHECK(seen.find("sk-test") == std::string::npos);
  // The malformed call came back as a tool error the model can correct; the trial went on.
  std::string refused = tool_message(rig.h.body(3), 0);
  CHECK(refused.rfind("Error:", 0) == 0);
  CHECK(rig.h.sleeps.size() == 1);  // the 429's Retry-After: 0, then the same request again
  CHECK(s.requests().size() == 5);
  CHECK(s.requests()[0].body == s.requests()[1].body);

  CHECK_MESSAGE(r.outcome == results::Outcome::kGraded, r.error);
  CHECK(r.episode.termination == agent::Termination::kUserStop);
  CHECK(r.grade.binary_pass);
  CHECK(r.grade.components.at("state_checks") == doctest::Approx(1.0));
  CHECK(r.grade.components.at("custom_checks") == doctest::Approx(1.0));
  REQUIRE(r.tool_log.size() == 3);
  CHECK(r.tool_log[1].record.outcome != tools::ToolOutcome::Kind::kOk);
  CHECK(r.episode.agent_usage.input_tokens > 0);

  // The trial's files: written, redacted, without the key; and nothing of the trial is left.
  TempDir out;
  auto dir = results::RunDir::open(out.path() + "/run", [](std::string_view t) { return std::string(t); });
  REQUIRE(dir.has_value());
  REQUIRE(trial::write_trial_files(*dir, r, "task_id: probe_openai\n").has_value());
  REQUIRE(dir->append_trial(trial::to_record(r)).has_value());
  // env.yaml: answer.txt as grading read it once the agent had written it (the task has no initial
  // files); logs.yaml: the trial's phases, its tool calls and its grade, in order.
  YAML::Node env = YAML::LoadFile(out.path() + "/run/trials/probe_openai/0/env.yaml");
  CHECK(env["filesystem"]["/env/fs/agent-visible/answer.txt"].as<std::string>() == "42\n");
  YAML::Node logs = YAML::LoadFile(out.path() + "/run/trials/probe_openai/0/logs.yaml");
  std::vector<std::string> said;
  for (const auto& e : logs["logs"]) said.push_back(e["message"].as<std::string>());
  CHECK(logs["total_logs"].as<std::size_t>() == said.size());
  auto at = [&](const std::string& m) { return std::find(said.begin(), said.end(), m) - said.begin(); };
  CHECK(at("phase agent") < at("tool write_file: ok"));
  CHECK(at("tool write_file: ok") < at("phase grade"));
  CHECK(at("phase grade") < at("graded: pass"));
  CHECK(at("graded: pass") < static_cast<long>(said.size()));
  std::string written = all_files(out.path());
  CHECK(written.find("probe_openai") != std::string::npos);
  CHECK(written.find(LlmHarness::kOpenAiKey) == std::string::npos);
  CHECK(rig.containers().empty());
}

TEST_CASE("trial (Anthropic protocol): tool_use runs in the runner and the trial passes") {
  TempDir task_dir;
  auto task = load(write_probe_task(task_dir, "probe_anthropic"));
  ProbeRig rig("anthropic", "claude-sonnet-4-5");
  auto& s = rig.h.server;
  s.push(200, fake_llm::anthropic_tool_use("toolu_1", "write_file", R"({"path": "answer.txt", "content": "42"})", "Writing."));
  s.push(200, fake_llm::anthropic_text("Done."));
  auto r = rig.run_llm(task);
  CHECK_MESSAGE(r.outcome == results::Outcome::kGraded, r.error);
  CHECK(r.grade.binary_pass);
  REQUIRE(s.requests().size() == 2);
  CHECK(s.requests()[0].path == FakeLlmServer::kAnthropicPath);
  CHECK(s.requests()[0].headers.at("x-api-key") == LlmHarness::kAnthropicKey);  // to the provider, from the host
  CHECK(rig.h.body(1).HasMember("messages"));
  // The first turn was asked while the sandbox came up (docs/sweeps.md "The first wave"): recorded,
  // its answer in the transcript once, its tool call run once, in the agent phase.
  CHECK(r.phases.count("first_turn_overlap") == 1);
  CHECK(r.episode.agent_calls == 2);
  int first_answers = 0;
  for (const auto& m : r.episode.messages) first_answers += m.role == ChatMessage::Role::kAssistant && !m.tool_calls.empty();
  CHECK(first_answers == 1);
  CHECK(r.tool_log.size() == 1);
  CHECK(rig.containers().empty());
}

TEST_CASE("sweep: a 500 storm is an infra error, retried in a fresh sandbox and never counted as a failure") {
  TempDir task_dir, out;
  write_probe_task(task_dir, "probe_storm");
  ProbeRig rig("openai", "gpt-4o");
  rig.h.server.push({500, {}, fake_llm::openai_error("overloaded", "server_error", "server_error")}, 12);
  std::ostringstream progress;
  auto sum = sweep_once(rig, task_dir.path(), 1, out.path() + "/run", progress);
  REQUIRE_MESSAGE(sum.has_value(), (sum ? "" : sum.error().what()));
  CAPTURE(progress.str());
  CHECK(sum->trials == 1);
  CHECK(sum->infra_errors == 1);
  CHECK(sum->passed == 0);
  CHECK(progress.str().find("retry probe_storm#0 llm:agent (attempt 2") != std::string::npos);
  CHECK(rig.h.server.requests().size() == 12);  // 6 tries per attempt, 2 attempts (max_attempt_retries 1)
  std::ifstream in(out.path() + "/run/trials.jsonl");
  std::string line;
  REQUIRE(std::getline(in, line));
  auto d = json::parse(line, "trials.jsonl");
  REQUIRE(d.has_value());
  CHECK(std::string((*d)["outcome"].GetString()) == "infra_error");
  CHECK((*d)["attempt"].GetInt() == 2);
  CHECK(std::string((*d)["error"].GetString()).find("500") != std::string::npos);
  CHECK(std::string((*d)["infra_kind"].GetString()) == "provider");
  CHECK(rig.containers().empty());

  // The provider is back: --resume runs the infra-error trial again; its old line is set aside.
  rig.h.server.push(200, fake_llm::openai_tool_call("call_1", "write_file", R"({"path": "answer.txt", "content": "42"})"));
  rig.h.server.push(200, fake_llm::openai_text("Done."));
  auto again = sweep_once(rig, task_dir.path(), 1, out.path() + "/run", progress, /*resume=*/true);
  REQUIRE_MESSAGE(again.has_value(), (again ? "" : again.error().what()));
  CHECK(again->trials == 1);
  CHECK(again->passed == 1);
  CHECK(again->infra_errors == 0);
  CHECK(progress.str().find("1 infra error(s) to retry") != std::string::npos);
  auto records = results::read_trials_jsonl(out.path() + "/run/trials.jsonl");
  REQUIRE(records.has_value());
  REQUIRE(records->trials.size() == 1);
  CHECK(records->trials[0].attempt == 3);  // attempts are numbered across invocations
  CHECK(fs::exists(out.path() + "/run/trials.superseded.jsonl"));
}

TEST_CASE("sweep: a rejected key is a setup error: the run stops, nothing is recorded as a result") {
  TempDir task_dir, out;
  write_probe_task(task_dir, "probe_key");
  ProbeRig rig("openai", "gpt-4o");
  rig.h.server.push({401, {}, fake_llm::openai_error("Incorrect API key provided", "invalid_api_key")}, 10);
  std::ostringstream progress;
  auto sum = sweep_once(rig, task_dir.path(), 3, out.path() + "/run", progress);
  REQUIRE_MESSAGE(sum.has_value(), (sum ? "" : sum.error().what()));
  CHECK(sum->setup_error);
  CHECK(sum->trials == 0);  // not a result of the model: no line in trials.jsonl
  CHECK(rig.h.server.requests().size() == 1);
  CHECK(sum->stopped.find("OPENAI_API_KEY") != std::string::npos);
  CHECK(rig.containers().empty());
}

TEST_CASE("trial: a budget exhausted mid-trial stops before the next call") {
  TempDir task_dir;
  auto task = load(write_probe_task(task_dir, "probe_budget"));
  ProbeRig rig("openai", "gpt-4o", 0.01);
  // 100k input tokens of gpt-4o: $0.25, past the $0.01 cap after the first call.
  rig.h.server.push(200, fake_llm::openai_tool_call("call_1", "write_file", R"({"path": "answer.txt", "content": "42"})", 100000, 10));
  rig.h.server.push(200, fake_llm::openai_text("Done."));
  auto r = rig.run_llm(task);
  CHECK(r.episode.termination == agent::Termination::kBudgetExhausted);
  CHECK(rig.h.server.requests().size() == 1);
  CHECK(r.tool_log.size() == 1);  // the paid-for call still ran
  CHECK(r.outcome == results::Outcome::kGraded);
  CHECK(rig.budget->spent() == doctest::Approx(0.2501));
  CHECK(rig.containers().empty());
}

TEST_CASE("trial: golden replay catches a wrong final state in json-db and reports the diff") {
  ProbeRig rig("openai", "gpt-4o");
  // As for a remote engine: json-db is reached by exec in its own container, not over the bridge.
  rig.env.engine_is_local = false;
  auto task = load(example_task("orders-db") + "/task.yaml");
  // The wrong order is marked paid.
  rig.h.server.push(200, fake_llm::openai_tool_call(
                             "call_1", "db_update", R"({"ops": [{"op": "replace", "path": "$.orders[1].status", "value": "paid"}]})"));
  rig.h.server.push(200, fake_llm::openai_text("Order O-001 is paid."));
  auto r = rig.run_llm(task);
  REQUIRE_MESSAGE(r.outcome == results::Outcome::kGraded, r.error);
  CHECK_FALSE(r.grade.binary_pass);
  CHECK(r.grade.components.at("state_checks") < 0.5);
  CHECK(r.grade.state_diff_json.find("O-002") != std::string::npos);
  CHECK(r.grade.state_diff_json.find("status") != std::string::npos);
  CHECK(r.final_state_json.find("\"paid\"") != std::string::npos);
  CHECK(rig.containers().empty());
}

TEST_CASE("trial: a service that dies under the agent makes the trial an infra error, not the model's failure") {
  ProbeRig rig("openai", "gpt-4o");
  auto task = load(example_task("orders-db") + "/task.yaml");
  auto& s = rig.h.server;
  s.push({200, {}, fake_llm::openai_text("Order O-001 is paid."), Millis(0), true});
  // The first request comes while the sandbox is brought up (docs/sweeps.md "The first wave"):
  // the kill waits for the agent phase as well.
  std::atomic<bool> in_agent{false};
  rig.env.on_progress = [&](const trial::TrialProgress& p) {
    if (p.phase == "agent") in_agent = true;
  };
  trial::TrialResult r;
  std::thread trial([&] { r = rig.run_llm(task); });
  rig.wait_for_requests(1, std::chrono::seconds(90));
  for (auto until = Clock::now() + std::chrono::seconds(90); !in_agent && Clock::now() < until;)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(in_agent);
  bool killed = false;
  for (const auto& c : rig.containers())
    for (const auto& n : c.names)
      if (n.size() >= 8 && n.compare(n.size() - 8, 8, "-json-db") == 0)
        killed = engine::kill_container(*docker_env().client, c.id).has_value();
  s.release();
  trial.join();
  REQUIRE(killed);
  CHECK(r.outcome == results::Outcome::kInfraError);
  CHECK(r.infra_kind == results::InfraKind::kSandbox);
  CAPTURE(r.error);
  CHECK(r.error.find("service 'json-db' stopped") != std::string::npos);
  CHECK(r.error.find("from outside the trial") != std::string::npos);
  CHECK(rig.containers().empty());
}

TEST_CASE("trial: an LLM user and an LLM judge, both on the host through the run's models and budget") {
  TempDir dir;
  dir.write("task.yaml",
            "task_id: probe_judge\nname: probe\ncategory: test\ndescription: \"Write 42.\"\n"
            "initial_user_message: \"Write answer.txt containing 42.\"\n"
            "tools:\n  agent: {enabled: [write_file]}\n  user: {enabled: []}\n"
            "user_simulator: {mode: llm, backstory: \"You want answer.txt to hold 42; stop once it does.\"}\n"
            "grading: grading.yaml\n");
  dir.write("grading.yaml",
            "combine: {method: weighted, weights: {state_checks: 1, llm_judge: 1}, pass_threshold: 0.9}\n"
            "state_checks:\n  jsonpaths:\n    - {path_glob: \"/env/fs/agent-visible/answer.txt\", contains_ci: \"42\"}\n"
            "llm_judge:\n  rubric: \"Did the assistant write 42 and say so?\"\n");
  auto task = load(dir.path() + "/task.yaml");
  ProbeRig rig("openai", "gpt-4o", 5.0);
  rig.cfg.models["user"] = rig.h.model("openai", "gpt-4o-mini");
  rig.cfg.models["judge"] = rig.h.model("openai", "gpt-4o-mini");
  auto& s = rig.h.server;
  s.push(200, fake_llm::openai_tool_call("call_1", "write_file", R"({"path": "answer.txt", "content": "42"})"));
  s.push(200, fake_llm::openai_text("Done: answer.txt holds 42."));
  s.push(200, fake_llm::openai_text("Perfect, thanks! ###STOP###"));                       // the user
  s.push(200, fake_llm::openai_text(R"({"score": 0.9, "reasons": "wrote 42 and said so"})"));  // the judge
  auto r = rig.run_llm(task);
  REQUIRE_MESSAGE(r.outcome == results::Outcome::kGraded, r.error);
  CHECK(r.episode.termination == agent::Termination::kUserStop);
  CHECK(r.episode.user_calls == 1);
  CHECK(r.grade.components.at("llm_judge") == doctest::Approx(0.9));
  CHECK(r.grade.components.at("state_checks") == doctest::Approx(1.0));
  CHECK(r.grade.binary_pass);  // (1 + 0.9) / 2 = 0.95
  REQUIRE(s.requests().size() == 4);
  // The user and the judge are the models the run config names, not the agent's.
  CHECK(rig.h.body(2)["model"].GetString() == std::string("gpt-4o-mini"));
  CHECK(rig.h.body(3)["model"].GetString() == std::string("gpt-4o-mini"));
  // The judge saw the transcript, on the host; nothing of grading went to the runner.
  CHECK(s.requests()[3].body.find("Did the assistant write 42") != std::string::npos);
  CHECK(r.judge_cost_usd > 0);
  CHECK(rig.budget->spent() == doctest::Approx(r.episode.agent_cost_usd + r.episode.user_cost_usd + r.judge_cost_usd));
  CHECK(rig.containers().empty());
}
