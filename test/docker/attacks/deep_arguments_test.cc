// Red team, arguments built to crash the reports (issue 29): a model's tool calls with arguments
// nested 100,000 and 1,000,000 deep, as arrays and as objects, and a 50 MB argument string, all in
// one trial through the LLM path of `forgectl run`, followed by the honest call that solves the
// task. Each is refused and kept as a bounded excerpt with its size and depth; the run exits 0
// with every report file and trial page written; --resume, merge, report and show on the run
// directory do not crash. The control is the same trial's last call: the task still passes.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/files.h"
#include "core/json.h"
#include "results/trial_record.h"
#include "support/deep_json.h"
#include "support/fake_llm_server.h"
#include "support/process.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

std::string write_task(const TempDir& dir) {
  fs::create_directories(fs::path(dir.path()) / "deep_args");
  dir.write("deep_args/task.yaml",
            "task_id: deep_args\nname: deep\ncategory: test\ndescription: \"Write 42.\"\n"
            "initial_user_message: \"Write answer.txt containing 42.\"\n"
            "tools:\n  agent: {enabled: [write_file]}\n  user: {enabled: []}\n"
            "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"Thanks. ###STOP###\"}\n"
            "grading: grading.yaml\nenvironment: {stack: none}\n");
  dir.write(
      "deep_args/grading.yaml",
      "state_checks:\n  jsonpaths:\n    - {path_glob: \"/env/fs/agent-visible/answer.txt\", contains_ci: \"42\"}\n");
  return dir.path() + "/deep_args";
}

RunResult forgectl(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  auto r = run_forgectl(args, Millis(400000), env);
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  return *r;
}

std::string read(const fs::path& p) {
  auto t = read_text(p);
  REQUIRE_MESSAGE(t.has_value(), p.string());
  return *t;
}

}  // namespace

TEST_CASE("attack, deep arguments: nested 100,000 and 1,000,000 deep and 50 MB, through run; every report written") {
  TempDir dir;
  const std::string task = write_task(dir);
  FakeLlmServer server;
  const std::string config = dir.write(
      "run.yaml", "models:\n  agent: {provider: openai, name: gpt-4o, base_url: \"" + server.base_url() +
                      "\", api_key_env: FORGECTL_TEST_KEY}\norchestrator:\n  timeouts: {turn_s: 60, episode_s: 300}\n");
  const std::map<std::string, std::string> env{{"FORGECTL_TEST_KEY", "sk-test"}};
  const std::string fifty_mb = R"({"path":"answer.txt","content":")" + std::string(50 << 20, 'a') + "\"}";
  // Each attack and the reason its refusal states: within 4 MiB, too deep; past it, too large.
  auto why = [](const std::string& args, std::size_t depth) {
    const std::string size = std::to_string(args.size()) + " bytes", levels = std::to_string(depth) + " level";
    if (args.size() <= 4194304) return "nested " + levels + "s deep, deeper than the limit of 64 levels (" + size + ")";
    return size + ", more than the limit of 4194304 bytes (nested " + levels + (depth == 1 ? "" : "s") + " deep)";
  };
  std::vector<std::pair<std::string, std::string>> attacks;
  for (std::size_t n : {std::size_t{100000}, std::size_t{1000000}}) {
    attacks.emplace_back(nested_array_arguments(n), "");
    attacks.back().second = why(attacks.back().first, n + 1);  // the array sits in the arguments' object
    attacks.emplace_back(nested_objects(n), "");
    attacks.back().second = why(attacks.back().first, n);
  }
  attacks.emplace_back(fifty_mb, why(fifty_mb, 1));
  int n = 0;
  for (const auto& [args, why] : attacks)
    server.push(200, fake_llm::openai_tool_call("call_" + std::to_string(++n), "write_file", args));
  server.push(200, fake_llm::openai_tool_call("call_honest", "write_file", R"({"path":"answer.txt","content":"42"})"));
  server.push(200, fake_llm::openai_text("Done."));

  const std::string out = dir.path() + "/run";
  auto run = forgectl({"run", task, "--config", config, "--agent", "llm", "--out", out}, env);
  CHECK_MESSAGE(run.code == 0, run.text());  // a signal would read 128 + its number here
  auto log = results::read_trials_jsonl(out + "/trials.jsonl");
  REQUIRE(log.has_value());
  REQUIRE(log->trials.size() == 1);
  const auto& rec = log->trials[0];
  CHECK(rec.graded());
  CHECK(rec.binary_pass);  // the honest call after the attacks
  CHECK(rec.tool_calls == 6);
  CHECK(rec.tool_errors == 5);

  const fs::path tdir = fs::path(out) / rec.trial_dir;
  for (const char* f : {"aggregate.json", "report.html", "run.json", "trials.jsonl"})
    CHECK(fs::exists(fs::path(out) / f));
  CHECK(fs::is_directory(fs::path(out) / "tolokaforge"));
  for (const char* f : {"trial.html", "trial.json", "trajectory.yaml", "trajectory.atif.json", "grade.yaml",
                        "metrics.yaml", "env.yaml", "logs.yaml"}) {
    CAPTURE(f);
    REQUIRE(fs::exists(tdir / f));
    CHECK(fs::file_size(tdir / f) < 256 * 1024);  // excerpts, never the megabytes the model sent
  }
  const std::string page = read(tdir / "trial.html");
  for (const auto& [args, why] : attacks) {
    CAPTURE(why);
    CHECK(page.find(why) != std::string::npos);
    CHECK(page.find(std::to_string(args.size()) + " bytes in all") != std::string::npos);
  }
  CHECK(page.find("[[[[[[[[[[[[") != std::string::npos);  // the excerpt itself
  CHECK(page.find("{&quot;a&quot;:{&quot;a&quot;:") != std::string::npos);

  // The run directory holds up to every reader.
  auto resumed = forgectl({"run", "--resume", "--out", out}, env);
  CHECK_MESSAGE(resumed.code == 0, resumed.text());
  CHECK(server.remaining() == 0);  // nothing was run again
  auto merged = forgectl({"merge", "--out", dir.path() + "/merged", out}, env);
  CHECK_MESSAGE(merged.code == 0, merged.text());
  CHECK(fs::exists(fs::path(dir.path()) / "merged" / rec.trial_dir / "trial.html"));
  auto report = forgectl({"report", out}, env);
  CHECK_MESSAGE(report.code == 0, report.text());
  auto shown = forgectl({"show", out, "deep_args", "0"}, env);
  CHECK_MESSAGE(shown.code == 0, shown.text());
  CHECK(shown.out.find("write_file fc-1") != std::string::npos);
  auto shown_json = forgectl({"show", out, "deep_args", "0", "--json"}, env);
  CHECK_MESSAGE(shown_json.code == 0, shown_json.text());
  CHECK(json::parse(shown_json.out, "show --json").has_value());
}
