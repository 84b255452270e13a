// trajectory.atif.json is ATIF v1.7 as Harbor's models validate it, and the checker that says so
// rejects each rule it claims to check (or every "valid" below would pass vacuously).
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "core/files.h"
#include "core/json.h"
#include "results/run_dir.h"
#include "support/atif_check.h"
#include "support/manifest_helpers.h"
#include "tools/arguments.h"
#include "trial/trial_files.h"

using namespace forge;
namespace fs = std::filesystem;

namespace {

ChatMessage said(ChatMessage::Role role, std::string text) { return ChatMessage{role, std::move(text)}; }

ChatMessage tool_result(std::string id, std::string text, bool error) {
  ChatMessage m = said(ChatMessage::Role::kTool, std::move(text));
  m.tool_call_id = std::move(id);
  m.name = "read_file";
  m.tool_error = error;
  return m;
}

// system, user, an agent step calling two tools (one refused), the agent's answer.
trial::TrialResult two_call_trial() {
  trial::TrialResult r;
  r.task_id = "files-basic";
  r.trial_index = 3;
  r.attempt = 2;
  r.agent = "oracle";
  r.trial_key = "k-123";
  r.episode.messages.push_back(said(ChatMessage::Role::kSystem, "You are careful."));
  r.episode.messages.push_back(said(ChatMessage::Role::kUser, "Read notes.txt."));
  ChatMessage call = said(ChatMessage::Role::kAssistant, "");
  call.reasoning = "look first";
  call.tool_calls = {{"fc-1", "read_file", tools::canonical_arguments(R"({"path":"notes.txt"})").text, "c1", ""},
                     {"fc-2", "read_file", tools::canonical_arguments(R"({"path":"../etc"})").text, "c2", ""}};
  r.episode.messages.push_back(call);
  r.episode.messages.push_back(tool_result("fc-1", "hello", false));
  r.episode.messages.push_back(tool_result("fc-2", "Error: path escapes the workspace", true));
  r.episode.messages.push_back(said(ChatMessage::Role::kAssistant, "It says hello."));
  r.episode.agent_usage = {120, 30};
  return r;
}

json::Document written_atif(const trial::TrialResult& r, test::TempFiles& t) {
  auto dir = results::RunDir::open(t.file("run-42"), [](std::string_view s) { return std::string(s); });
  REQUIRE(dir.has_value());
  REQUIRE(trial::write_trial_files(*dir, r, "").has_value());
  auto text = read_text(t.file("run-42") + "/trials/files-basic/3/trajectory.atif.json");
  REQUIRE(text.has_value());
  json::Document d;
  REQUIRE_FALSE(json::parse_document(d, *text));
  return d;
}

}  // namespace

TEST_CASE("trajectory.atif.json is ATIF v1.7: run-scoped session_id, a trajectory_id per document, refusals marked") {
  test::TempFiles t("atif");
  json::Document d = written_atif(two_call_trial(), t);
  CHECK(test::atif_v17_violations(d) == std::vector<std::string>{});
  CHECK(std::string(d["schema_version"].GetString()) == trial::kAtifVersion);
  CHECK(std::string(d["session_id"].GetString()) == "run-42");  // every trial of the run shares it
  CHECK(std::string(d["trajectory_id"].GetString()) == "files-basic/3@2");
  const auto& steps = d["steps"];
  REQUIRE(steps.Size() == 4);
  CHECK(std::string(steps[2]["reasoning_content"].GetString()) == "look first");
  const auto& results = steps[2]["observation"]["results"];
  REQUIRE(results.Size() == 2);
  CHECK_FALSE(results[0].HasMember("extra"));
  CHECK(results[1]["extra"]["tool_error"].GetBool());
  CHECK(d["final_metrics"]["total_steps"].GetInt() == 4);
  CHECK(d["final_metrics"]["total_prompt_tokens"].GetInt() == 120);
  CHECK(std::string(d["extra"]["trial_key"].GetString()) == "k-123");
}

TEST_CASE("the ATIF v1.7 checker rejects what Harbor's models reject") {
  test::TempFiles t("atif-bad");
  auto broken = [&](const std::function<void(json::Document&)>& change) {
    json::Document d = written_atif(two_call_trial(), t);
    change(d);
    return test::atif_v17_violations(d);
  };
  CHECK(broken([](json::Document& d) { d["schema_version"].SetString("ATIF-v1.2"); }).size() == 1);
  CHECK(broken([](json::Document& d) { d["steps"][1]["step_id"].SetInt(7); }).size() == 1);
  CHECK(broken([](json::Document& d) { d["steps"][0]["source"].SetString("tool"); }).size() == 1);
  CHECK(broken([](json::Document& d) { d["steps"][1].AddMember("reasoning_content", "x", d.GetAllocator()); }).size() ==
        1);
  CHECK(broken([](json::Document& d) { d["steps"][2].AddMember("mood", "x", d.GetAllocator()); }).size() == 1);
  CHECK(broken([](json::Document& d) {
          d["steps"][2]["observation"]["results"][0]["source_call_id"].SetString("nope");
        }).size() == 1);
  CHECK(broken([](json::Document& d) { d["final_metrics"]["total_steps"].SetInt(9); }).size() == 1);
  CHECK(broken([](json::Document& d) { d["agent"].RemoveMember("name"); }).size() == 1);
}
