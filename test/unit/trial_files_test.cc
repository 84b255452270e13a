// A trial's YAML files stay YAML whatever the agent wrote: control characters an agent put in its
// messages or tool output (terminal escapes, C1 codes) are written as visible escapes.
#include <doctest/doctest.h>

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/files.h"
#include "results/run_dir.h"
#include "support/manifest_helpers.h"
#include "trial/trial_env.h"
#include "trial/trial_files.h"
#include "trial/yaml_text.h"

using namespace forge;

TEST_CASE("trial files: an agent's control characters never reach the YAML files raw") {
  test::TempFiles t("trial-files");
  auto dir = results::RunDir::open(t.file("run"), [](std::string_view s) { return std::string(s); });
  REQUIRE(dir.has_value());
  trial::TrialResult r;
  r.task_id = "esc";
  r.agent = "replay";
  // Terminal escapes, a C1 CSI, DEL, CR, and the line breaks only YAML knows (NEL, LS, PS), each
  // followed by a key the agent would like the file to hold.
  const std::string hostile =
      "done \x1b[2J\x1b[31mPASS\x07 \xc2\x9b"
      "31m\x7f end\r\nline two\xc2\x85"
      "score: 1\xe2\x80\xa8"
      "binary_pass: true\xe2\x80\xa9"
      "forged_by_agent: 1";
  r.episode.messages.push_back({ChatMessage::Role::kAssistant, hostile, {}, {}, {}, {}});
  r.grade.reasons = {"saw: " + hostile};
  REQUIRE(trial::write_trial_files(*dir, r, "task_id: esc\n").has_value());
  for (const char* name : {"trajectory.yaml", "grade.yaml"}) {
    CAPTURE(name);
    std::string path;
    for (const auto& e : std::filesystem::recursive_directory_iterator(t.file("run")))
      if (e.path().filename() == name) path = e.path().string();
    REQUIRE(!path.empty());
    auto text = read_text(path).value();
    bool raw = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const auto c = static_cast<unsigned char>(text[i]);
      const auto n = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
      const auto m = i + 2 < text.size() ? static_cast<unsigned char>(text[i + 2]) : 0;
      raw = raw || (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f || (c == 0xc2 && n >= 0x80 && n <= 0x9f) ||
            (c == 0xe2 && n == 0x80 && (m == 0xa8 || m == 0xa9));
    }
    CHECK_FALSE(raw);
    CHECK(text.find("PASS") != std::string::npos);
    YAML::Node doc;
    CHECK_NOTHROW(doc = YAML::Load(text));
    CHECK_FALSE(doc["forged_by_agent"].IsDefined());  // no key of the agent's making at the top
  }
}

TEST_CASE("trial files: env.yaml holds the final state and the files grading read, capped; logs.yaml the events") {
  test::TempFiles t("trial-env");
  auto dir = results::RunDir::open(t.file("run"), [](std::string_view s) { return std::string(s); });
  REQUIRE(dir.has_value());
  trial::TrialResult r;
  r.task_id = "env";
  r.agent = "replay";
  r.final_state_json =
      R"({"db":{"orders":[{"id":1,"status":"shipped"}],"users":[{"id":7}],"device":{"sim":"on"},"user_db":{"x":1}}})";
  r.initial_files["/env/fs/agent-visible/answer.txt"] = "initial\n";
  r.mock_web_url = "http://mock-web:8080/task/shop/env/";
  const std::string big(trial::kEnvFileBytes + 100, 'x');
  trial::keep_graded_files(r, {{"/env/fs/agent-visible/answer.txt", "42\n", ""},
                               {"/env/fs/agent-visible/big.log", big, ""},
                               {"/env/fs/agent-visible/huge.bin", "", "larger than 8 MiB (9000000 bytes)"},
                               {"", "", "the workspace holds more than 200000 entries"}});
  trial::keep_graded_files(r, {{"/env/fs/agent-visible/answer.txt", "read again", ""}});  // listed once
  trial::add_event(r, "INFO", "trial", "phase agent");
  trial::add_event(r, "WARNING", "tools", "tool bash: failed", {{"tool", "bash"}, {"error", "exit 1\x1b[0m"}});
  REQUIRE(trial::write_trial_files(*dir, r, "task_id: env\n").has_value());

  YAML::Node env = YAML::LoadFile(t.file("run") + "/trials/env/0/env.yaml");
  CHECK(env["db"]["orders"][0]["status"].as<std::string>() == "shipped");  // the final state, as data
  CHECK(env["db"]["users"][0]["id"].as<int>() == 7);
  CHECK(env["db"]["device"]["sim"].as<std::string>() == "on");
  // Tolokaforge's split by actor: the user's device apart, user_db in neither.
  CHECK(env["agent"]["orders"][0]["id"].as<int>() == 1);
  CHECK_FALSE(env["agent"]["device"].IsDefined());
  CHECK_FALSE(env["agent"]["user_db"].IsDefined());
  CHECK(env["user"]["device"]["sim"].as<std::string>() == "on");
  CHECK_FALSE(env["user"]["orders"].IsDefined());
  CHECK(env["mock_web_url"].as<std::string>() == "http://mock-web:8080/task/shop/env/");
  CHECK(env["filesystem"]["/env/fs/agent-visible/answer.txt"].as<std::string>() == "42\n");  // not "initial"
  CHECK(env["filesystem"]["/env/fs/agent-visible/big.log"].as<std::string>().size() == trial::kEnvFileBytes);
  CHECK(env["filesystem_truncated"]["/env/fs/agent-visible/big.log"].as<std::string>().find("truncated: the first 65536 of") == 0);
  CHECK(env["filesystem"]["/env/fs/agent-visible/huge.bin"].as<std::string>().empty());
  CHECK(env["filesystem_truncated"]["/env/fs/agent-visible/huge.bin"].as<std::string>().find("larger than 8 MiB") == 0);
  CHECK(env["filesystem_listing"].as<std::string>().find("200000 entries") != std::string::npos);
  CHECK(env["initial_filesystem"]["/env/fs/agent-visible/answer.txt"].as<std::string>() == "initial\n");
  CHECK(env["agent_visible_dir"].as<std::string>() == "/env/fs/agent-visible");

  YAML::Node logs = YAML::LoadFile(t.file("run") + "/trials/env/0/logs.yaml");
  CHECK(logs["trial_id"].as<std::string>() == "env_0");
  CHECK(logs["total_logs"].as<int>() == 2);
  REQUIRE(logs["logs"].size() == 2);
  CHECK(logs["logs"][1]["level"].as<std::string>() == "WARNING");
  CHECK(logs["logs"][1]["module"].as<std::string>() == "tools");
  CHECK(logs["logs"][1]["context"]["error"].as<std::string>() == "exit 1\x1b[0m");  // quoted, so it reads back
  CHECK(read_text(t.file("run") + "/trials/env/0/logs.yaml").value().find('\x1b') == std::string::npos);
  CHECK(logs["logs"][0]["timestamp"].as<std::string>().size() == 24);  // 2026-11-30T06:45:12.345Z
}

TEST_CASE("trial files: a state over env.yaml's cap keeps whole tables and names those left out") {
  test::TempFiles t("trial-env-cap");
  auto dir = results::RunDir::open(t.file("run"), [](std::string_view s) { return std::string(s); });
  REQUIRE(dir.has_value());
  trial::TrialResult r;
  r.task_id = "cap";
  const std::string blob(trial::kEnvStateBytes, 'y');
  r.final_state_json = R"({"db":{"a_small":[1,2],"b_big":[")" + blob + R"("],"c_small":[3]}})";
  for (std::size_t i = 0; i < trial::kMaxTrialEvents + 10; ++i) trial::add_event(r, "INFO", "tools", "tool x: ok");
  REQUIRE(trial::write_trial_files(*dir, r, "task_id: cap\n").has_value());
  YAML::Node env = YAML::LoadFile(t.file("run") + "/trials/cap/0/env.yaml");
  CHECK(env["db"]["a_small"].size() == 2);
  CHECK(env["db"]["c_small"][0].as<int>() == 3);
  CHECK_FALSE(env["db"]["b_big"].IsDefined());
  CHECK(env["db_truncated"].as<std::string>().find("b_big") != std::string::npos);
  YAML::Node logs = YAML::LoadFile(t.file("run") + "/trials/cap/0/logs.yaml");
  CHECK(logs["total_logs"].as<std::size_t>() == trial::kMaxTrialEvents + 1);
  CHECK(logs["logs"][trial::kMaxTrialEvents]["message"].as<std::string>().find("the rest were dropped") !=
        std::string::npos);
}

TEST_CASE("trial files: an agent's text reads back exactly, whatever its indentation, line breaks or bytes") {
  // Each would be cut, re-indented or made unreadable in a plain literal block.
  const std::vector<std::string> texts = {
      "    I did the task honestly\n# actually I cheated",  // indented first line, no final newline
      "  x\n  y\n",                                       // indented block
      "\n   hidden\nscore: 1\n",                          // blank first line, then indented
      "two final newlines\n\n",
      "no newline",
      "",
      "ctrl \x1b[31mred\x1b[0m\n",
      "nel \xc2\x85 ls \xe2\x80\xa8 ps \xe2\x80\xa9 end\n",
      "tab\tinside\n\tindented later line\n",
      "plain block\nof two lines\n",
      "bom \xef\xbb\xbf inside\n"};
  for (const auto& text : texts) {
    CAPTURE(text);
    YAML::Emitter e;
    e << YAML::BeginMap << YAML::Key << "content" << YAML::Value;
    trial::emit_text(e, text);
    e << YAML::Key << "after" << YAML::Value << "kept" << YAML::EndMap;
    const std::string yaml = trial::visible_controls(std::string(e.c_str(), e.size()));
    CAPTURE(yaml);
    YAML::Node doc;
    REQUIRE_NOTHROW(doc = YAML::Load(yaml));
    CHECK(doc["content"].as<std::string>() == text);
    CHECK(doc["after"].as<std::string>() == "kept");
    CHECK(doc.size() == 2);
  }
  // Ill-formed UTF-8 (a binary `cat`, an agent's \xff) becomes U+FFFD: the file stays UTF-8.
  YAML::Emitter e;
  e << YAML::BeginMap << YAML::Key << "content" << YAML::Value;
  trial::emit_text(e, "bin \xff\xfe\xc0\xaf ok\n");
  e << YAML::EndMap;
  CHECK(YAML::Load(e.c_str())["content"].as<std::string>() == "bin \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd ok\n");
  // The plain case stays a readable block.
  YAML::Emitter plain;
  plain << YAML::BeginMap << YAML::Key << "content" << YAML::Value;
  trial::emit_text(plain, "line one\nline two\n");
  plain << YAML::EndMap;
  CHECK(std::string(plain.c_str()).find("|") != std::string::npos);
}

TEST_CASE("trials.jsonl: a trial's egress ledger in counts; its blocked entries are the agent's tries only") {
  trial::TrialResult r;
  r.task_id = "fetch";
  r.agent = "oracle";
  auto entry = [](const char* phase, const char* outcome) {
    EgressEntry e;
    e.phase = phase;
    e.host = "github.com";
    e.what = "A";
    e.outcome = outcome;
    return e;
  };
  // Blocked: one in the task's setup and one in grading (not the agent's), two of the agent's.
  r.egress = EgressLedger{{entry("setup", "refused"), entry("agent", "refused"), entry("", "refused"),
                           entry("agent", "answered"), entry("grade", "refused")},
                          7};
  results::TrialRecord rec = trial::to_record(r);
  CHECK(rec.egress_recorded);
  CHECK(rec.egress_entries == 5);
  CHECK(rec.egress_dropped == 7);
  CHECK(rec.egress_blocked == 2);
  CHECK(results::to_json_line(rec).find(R"("egress":{"entries":5,"dropped":7,"blocked":2})") != std::string::npos);
  r.egress.reset();  // no ledger recorded: no "egress" on the line
  CHECK(results::to_json_line(trial::to_record(r)).find("\"egress\"") == std::string::npos);
}
