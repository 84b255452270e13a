// Honest outcomes, end to end with the forgectl binary: what is not the model's doing never
// becomes a graded failure. Setup problems are caught before the first trial (exit 2, nothing
// recorded) and `forgectl validate` refuses the same inputs with the same messages; faults
// during a trial (a judge answering 500, a provider that never answers) are infra errors.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "results/trial_record.h"
#include "support/fake_llm_server.h"
#include "support/process.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

// A file task the oracle solves: write 42 to answer.txt. `grading_extra` is appended to
// grading.yaml, `task_extra` to task.yaml.
std::string write_task(const TempDir& dir, const std::string& id, const std::string& tools = "[write_file, read_file]",
                       const std::string& task_extra = "solution:\n  tool_calls:\n    - {name: write_file, arguments: {path: answer.txt, content: \"42\"}}\n",
                       const std::string& grading_extra = "") {
  fs::path d = fs::path(dir.path()) / id;
  fs::create_directories(d);
  std::ofstream(d / "task.yaml") << "task_id: " << id
                                 << "\nname: probe\ncategory: test\ndescription: \"Write 42.\"\n"
                                    "initial_user_message: \"Write answer.txt containing 42.\"\n"
                                    "tools:\n  agent: {enabled: "
                                 << tools
                                 << "}\n  user: {enabled: []}\n"
                                    "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"Thanks. ###STOP###\"}\n"
                                    "grading: grading.yaml\n"
                                    "environment: {stack: none}\n"
                                 << task_extra;
  std::ofstream(d / "grading.yaml") << "combine: {method: weighted, pass_threshold: 0.5}\n"
                                       "state_checks:\n  jsonpaths:\n"
                                       "    - {path_glob: \"/env/fs/agent-visible/answer.txt\", contains_ci: \"42\"}\n"
                                    << grading_extra;
  return d.string();
}

// A run config whose models point at the test's fake provider.
std::string write_config(const TempDir& dir, const std::string& base_url, const std::string& key_env,
                         const std::string& extra_models = "") {
  std::string path = dir.path() + "/run.yaml";
  std::ofstream(path) << "models:\n  agent: {provider: openai, name: gpt-4o, base_url: \"" << base_url
                      << "\", api_key_env: " << key_env << "}\n"
                      << extra_models
                      << "orchestrator:\n  max_attempt_retries: 1\n  timeouts: {turn_s: 3, episode_s: 120}\n";
  return path;
}

std::size_t recorded(const std::string& run_dir) {
  auto log = results::read_trials_jsonl(run_dir + "/trials.jsonl");
  return log ? log->trials.size() : 0;
}

// Preflight refuses `run_args`: exit 2, `message` in stderr, nothing recorded; and validate
// with the same inputs refuses them with the same message.
void refused_before_anything(const std::vector<std::string>& run_args, const std::vector<std::string>& validate_args,
                             const std::string& message, const std::map<std::string, std::string>& env = {}) {
  TempDir out;
  std::vector<std::string> args = run_args;
  args.insert(args.end(), {"--out", out.path() + "/run"});
  auto r = forgectl_run(args, env);
  CAPTURE(r.text());
  CHECK(r.code == 2);
  CHECK(r.err.find(message) != std::string::npos);
  CHECK(r.err.find("nothing was started") != std::string::npos);
  CHECK(recorded(out.path() + "/run") == 0);
  if (validate_args.empty()) return;
  auto v = forgectl_run(validate_args, env);
  CAPTURE(v.text());
  CHECK(v.code == 2);
  CHECK(v.out.find(message) != std::string::npos);
}

}  // namespace

TEST_CASE("honest outcomes: an api_key_env naming an unset variable stops the run before any trial") {
  TempDir dir;
  FakeLlmServer server;
  std::string task = write_task(dir, "unset_key");
  std::string cfg = write_config(dir, server.base_url(), "FORGECTL_TEST_SURELY_UNSET_KEY");
  refused_before_anything({"run", task, "--config", cfg, "--agent", "llm"},
                          {"validate", task, "--config", cfg, "--agent", "llm"}, "FORGECTL_TEST_SURELY_UNSET_KEY is not set");
  CHECK(server.requests().empty());
}

TEST_CASE("honest outcomes: the exec helper missing beside the binary stops the run before any trial") {
  TempDir dir;
  std::string task = write_task(dir, "no_helper");
  refused_before_anything({"run", task, "--agent", "oracle"}, {}, "FORGECTL_EXEC_HELPER names '/nonexistent/forgectl-exec'",
                          {{"FORGECTL_EXEC_HELPER", "/nonexistent/forgectl-exec"}});
}

TEST_CASE("honest outcomes: an llm_judge with no usable judge model stops the run before any trial") {
  TempDir dir;
  FakeLlmServer server;
  std::string task = write_task(dir, "no_judge", "[write_file, read_file]",
                                "solution:\n  tool_calls:\n    - {name: write_file, arguments: {path: answer.txt, content: \"42\"}}\n",
                                "llm_judge: {rubric: \"Did it write 42?\"}\n");
  std::string cfg = write_config(dir, server.base_url(), "FORGECTL_TEST_KEY");
  refused_before_anything({"run", task, "--config", cfg, "--agent", "oracle"},
                          {"validate", task, "--config", cfg, "--agent", "oracle"}, "needs models.judge",
                          {{"FORGECTL_TEST_KEY", "sk-test"}});
}

TEST_CASE("honest outcomes: a task enabling a tool that does not exist is refused before any trial") {
  TempDir dir;
  std::string task = write_task(dir, "unknown_tool", "[write_file, frobnicate]");
  refused_before_anything({"run", task, "--agent", "oracle"}, {"validate", task}, "tool 'frobnicate' is not a forgectl built-in");
}

TEST_CASE("honest outcomes: --agent oracle on a task without a solution is refused before any trial") {
  TempDir dir;
  std::string task = write_task(dir, "no_solution", "[write_file, read_file]", "");
  refused_before_anything({"run", task, "--agent", "oracle"}, {"validate", task, "--agent", "oracle"}, "has no solution");
}

TEST_CASE("honest outcomes: a judge answering 500 at grading time is an infra error, never a score of 0") {
  TempDir dir, out;
  FakeLlmServer server;
  server.push({500, {}, fake_llm::openai_error("overloaded", "server_error", "server_error")}, 200);
  std::string task = write_task(dir, "judge_500", "[write_file, read_file]",
                                "solution:\n  tool_calls:\n    - {name: write_file, arguments: {path: answer.txt, content: \"42\"}}\n",
                                "llm_judge: {rubric: \"Did it write 42?\"}\n");
  std::string cfg = write_config(dir, server.base_url(), "FORGECTL_TEST_KEY",
                                 "  judge: {provider: openai, name: gpt-4o-mini, base_url: \"" + server.base_url() +
                                     "\", api_key_env: FORGECTL_TEST_KEY}\n");
  auto r = forgectl_run({"run", task, "--config", cfg, "--agent", "oracle", "--out", out.path() + "/run"},
                        {{"FORGECTL_TEST_KEY", "sk-test"}});
  CAPTURE(r.text());
  CHECK(r.code == 1);  // infra errors left after retries
  auto log = results::read_trials_jsonl(out.path() + "/run/trials.jsonl");
  REQUIRE(log.has_value());
  REQUIRE(log->trials.size() == 1);
  const auto& t = log->trials[0];
  CHECK(t.outcome == results::Outcome::kInfraError);
  CHECK(t.infra_kind == results::InfraKind::kGrader);
  CHECK(t.attempt == 2);  // retried once in a fresh sandbox
  CHECK(t.error.find("llm_judge") != std::string::npos);
  CHECK(r.out.find("0/0 graded trials passed") != std::string::npos);
}

TEST_CASE("honest outcomes: a provider that accepts the connection and never answers is an infra error") {
  TempDir dir, out;
  FakeLlmServer server;
  ScriptedResponse hang;
  hang.held = true;  // answers only after release(), which comes after the run
  server.push(hang, 50);
  std::string task = write_task(dir, "black_hole");
  std::string cfg = write_config(dir, server.base_url(), "FORGECTL_TEST_KEY");
  auto r = forgectl_run({"run", task, "--config", cfg, "--agent", "llm", "--out", out.path() + "/run"},
                        {{"FORGECTL_TEST_KEY", "sk-test"}});
  server.release();
  CAPTURE(r.text());
  CHECK(r.code == 1);
  auto log = results::read_trials_jsonl(out.path() + "/run/trials.jsonl");
  REQUIRE(log.has_value());
  REQUIRE(log->trials.size() == 1);
  CHECK(log->trials[0].outcome == results::Outcome::kInfraError);
  CHECK(log->trials[0].infra_kind == results::InfraKind::kProvider);
  CHECK(log->trials[0].termination_reason == "infra_error");
}

TEST_CASE("honest outcomes: --trials beyond the limit and --trials 0 are refused at once") {
  TempDir dir, out;
  std::string task = write_task(dir, "many");
  auto big = forgectl_run({"run", task, "--agent", "oracle", "--trials", "2147483647", "--out", out.path() + "/a"});
  CHECK(big.code == 2);
  CHECK(big.err.find("--trials") != std::string::npos);
  auto zero = forgectl_run({"run", task, "--agent", "oracle", "--trials", "0", "--out", out.path() + "/b"});
  CHECK(zero.code == 2);
  CHECK(zero.err.find("--trials 0") != std::string::npos);
}
