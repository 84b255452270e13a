// Every serializer and renderer that sees model, tool, task or agent data, fed a document at the
// depth limit and far past it: iterative or bounded, never recursive on the C stack (issue 29).
#include <doctest/doctest.h>

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>

#include "core/files.h"
#include "core/json.h"
#include "core/limits.h"
#include "results/aggregate.h"
#include "results/report_files.h"
#include "results/run_dir.h"
#include "results/show.h"
#include "results/trial_detail.h"
#include "results/trial_page.h"
#include "results/trial_record.h"
#include "support/deep_json.h"
#include "support/manifest_helpers.h"
#include "tools/arguments.h"
#include "tools/redact.h"
#include "trial/trial_files.h"
#include "trial/yaml_text.h"

using namespace forge;
using forge::test::build_deep;
using forge::test::nested_text;
namespace fs = std::filesystem;

namespace {

constexpr int kAt = limits::kMaxJsonDepth;  // the deepest any parse accepts
constexpr int kFar = 200000;                // only composing values gets here

std::string yaml_of(const json::Value& v) {
  YAML::Emitter e;
  trial::emit_json(e, v);
  return std::string(e.c_str(), e.size());
}

// A trial whose model sent arguments nested 1,000,000 deep (refused, as the agent loop records
// them) and, in the honest control, arguments at the deepest a model may nest.
trial::TrialResult deep_trial() {
  trial::TrialResult r;
  r.task_id = "deep";
  r.agent = "llm";
  r.outcome = results::Outcome::kGraded;
  auto refused = tools::canonical_arguments(std::string(1000000, '[') + std::string(1000000, ']'));
  std::string ok(limits::kMaxModelJsonDepth - 1, '[');
  ok = R"({"path":)" + ok + std::string(limits::kMaxModelJsonDepth - 1, ']') + "}";
  ChatMessage said{ChatMessage::Role::kAssistant, ""};
  said.tool_calls = {{"fc-1", "read_file", refused.text, "call_1", refused.refusal},
                     {"fc-2", "read_file", tools::canonical_arguments(ok).text, "call_2", ""}};
  r.episode.messages.push_back(said);
  ChatMessage answer{ChatMessage::Role::kTool, "Error: arguments for 'read_file' " + refused.refusal};
  answer.tool_call_id = "fc-1";
  answer.name = "read_file";
  answer.tool_error = true;
  r.episode.messages.push_back(answer);
  tools::CallRecord rec;
  rec.tool = "read_file";
  rec.arguments = refused.text;
  rec.outcome = tools::ToolOutcome::Kind::kRefused;
  rec.reason = "arguments for 'read_file' " + refused.refusal;
  r.tool_log.push_back({"assistant", rec});
  return r;
}

}  // namespace

TEST_CASE("serializer json::to_string and to_pretty_string: at the limit and 200,000 deep") {
  json::Document d;
  build_deep(d, kAt);
  CHECK(json::to_string(d) == nested_text(kAt));
  json::Document back;
  REQUIRE_FALSE(json::parse_document(back, json::to_pretty_string(d)));
  CHECK(json::to_string(back) == nested_text(kAt));
  build_deep(d, kFar);
  CHECK(json::to_string(d) == nested_text(kFar));
  // Indented, 200,000 levels would be 40 GB of spaces: compact instead.
  CHECK(json::to_pretty_string(d) == nested_text(kFar));
}

TEST_CASE("serializer json::canonical: at the limit sorted, past it refused with the reason") {
  CHECK(json::canonical("{\"b\":" + nested_text(kAt - 1) + ",\"a\":1}").value() ==
        "{\"a\":1,\"b\":" + nested_text(kAt - 1) + "}");
  CHECK(json::canonical(nested_text(kAt + 1)).error().message ==
        "document has nesting deeper than 128 levels (at offset 128)");
}

TEST_CASE("serializer pretty_json (trial pages, show): indented at the limit, the text as it is past it") {
  const std::string at = results::pretty_json(nested_text(kAt));
  CHECK(at.find("\n") != std::string::npos);
  CHECK(results::pretty_json(nested_text(kAt + 1)) == nested_text(kAt + 1));
  const std::string far = nested_text(1000000);
  CHECK(results::pretty_json(far) == far);
  CHECK(results::pretty_json("{\"a\":1,\"a\":2}") == "{\"a\":1,\"a\":2}");  // ambiguous: shown as sent
}

TEST_CASE("serializer indented_json (aggregate.json, Tolokaforge's files): at the limit, and never null past it") {
  const std::string at = results::indented_json(nested_text(kAt));
  CHECK(at.find("\n  [") != std::string::npos);
  CHECK(results::indented_json(nested_text(kAt + 1)) == nested_text(kAt + 1) + "\n");
}

TEST_CASE("serializer emit_json (trajectory.yaml, grade.yaml, env.yaml): YAML at the limit, JSON text past it") {
  json::Document d;
  build_deep(d, kAt);
  YAML::Node cur = YAML::Load(yaml_of(d));
  int depth = 0;
  while (cur.IsSequence()) {
    ++depth;
    if (cur.size() == 0) break;
    YAML::Node inner = cur[0];
    cur.reset(inner);  // rebinds (operator= would assign into the document)
  }
  CHECK(depth == kAt);
  build_deep(d, kFar);
  const std::string far = yaml_of(d);
  CHECK(YAML::Load(far).as<std::string>() == nested_text(kFar));  // one scalar, not 200,000 indents
  YAML::Emitter e;
  trial::emit_json_text(e, nested_text(kAt + 1));
  CHECK(YAML::Load(e.c_str()).as<std::string>() == nested_text(kAt + 1));
}

TEST_CASE("serializer redact_json: at the limit structurally, past it by its text pass") {
  const std::string at = "{\"password\":\"hunter2\",\"x\":" + nested_text(kAt - 1) + "}";
  CHECK(tools::redact_json(at) == "{\"password\":\"[REDACTED]\",\"x\":" + nested_text(kAt - 1) + "}");
  const std::string far = "{\"password\":\"hunter2\",\"x\":" + nested_text(1000000) + "}";
  CHECK(tools::redact_json(far).find("hunter2") == std::string::npos);
}

TEST_CASE(
    "serializers of a trial (trial.json, trajectory.yaml, ATIF, its page, show, report) with refused deep arguments") {
  test::TempFiles t("deep-trial");
  auto dir = results::RunDir::open(t.file("run"), [](std::string_view s) { return std::string(s); });
  REQUIRE(dir.has_value());
  trial::TrialResult r = deep_trial();
  REQUIRE(trial::write_trial_files(*dir, r, "task_id: deep\n").has_value());
  REQUIRE(dir->append_trial(trial::to_record(r)).has_value());
  const fs::path tdir = fs::path(t.file("run")) / "trials" / "deep" / "0";

  for (const char* name : {"trial.json", "trajectory.yaml", "trajectory.atif.json"}) {
    CAPTURE(name);
    auto text = read_text(tdir / name);
    REQUIRE(text.has_value());
    CHECK(text->size() < 64 * 1024);  // the excerpt, never the 2 MB the model sent
  }
  auto atif = json::parse(read_text(tdir / "trajectory.atif.json").value(), "atif");
  REQUIRE(atif.has_value());
  const auto& calls = (*atif)["steps"][0]["tool_calls"];
  CHECK(json::get_string(calls[0], "tool_call_id") == "fc-1");
  CHECK(json::get_string(calls[0]["arguments"], "raw").substr(0, 10) == "[[[[[[[[[[");
  CHECK(YAML::LoadFile((tdir / "trajectory.yaml").string())["messages"][0]["tool_calls"][0]["id"].as<std::string>() ==
        "fc-1");

  auto detail = results::TrialDetail::read((tdir / "trial.json").string());
  REQUIRE(detail.has_value());
  REQUIRE(detail->messages[0].tool_calls.size() == 2);
  const auto& c = detail->messages[0].tool_calls[0];
  CHECK(c.refusal == "are refused: nested 1000000 levels deep, deeper than the limit of 64 levels (2000000 bytes)");
  CHECK(c.provider_id == "call_1");

  REQUIRE(results::write_reports(t.file("run")).has_value());
  const std::string page = read_text(tdir / "trial.html").value();
  CHECK(page.find("nested 1000000 levels deep") != std::string::npos);
  CHECK(page.find("[[[[[[[[[[") != std::string::npos);  // the excerpt
  CHECK(page.find("2000000 bytes in all") != std::string::npos);
  CHECK(page.find("the provider's call_1") != std::string::npos);
  CHECK(fs::exists(fs::path(t.file("run")) / "report.html"));
  CHECK(fs::exists(fs::path(t.file("run")) / "aggregate.json"));

  results::ShowRequest req;
  req.dir = t.file("run");
  req.task = "deep";
  req.index = 0;
  auto shown = results::show(req);
  REQUIRE(shown.has_value());
  CHECK(shown->find("read_file fc-1") != std::string::npos);
}

TEST_CASE(
    "trial pages: a trial.json that cannot be read gets a page saying why; the others and report.html are written") {
  test::TempFiles t("bad-detail");
  auto dir = results::RunDir::open(t.file("run"), [](std::string_view s) { return std::string(s); });
  REQUIRE(dir.has_value());
  trial::TrialResult good = deep_trial(), bad = deep_trial();
  bad.trial_index = 1;
  for (const auto* r : {&good, &bad}) {
    REQUIRE(trial::write_trial_files(*dir, *r, "task_id: deep\n").has_value());
    REQUIRE(dir->append_trial(trial::to_record(*r)).has_value());
  }
  const fs::path run = t.file("run");
  REQUIRE(write_file_atomic((run / "trials/deep/1/trial.json").string(), "{\"messages\": " + nested_text(5000) + "}")
              .has_value());
  REQUIRE(results::write_reports(run.string()).has_value());
  CHECK(read_text(run / "trials/deep/1/trial.html").value().find("trial.json could not be read") != std::string::npos);
  CHECK(read_text(run / "trials/deep/0/trial.html").value().find("nested 1000000 levels deep") != std::string::npos);
  CHECK(fs::exists(run / "report.html"));
}
