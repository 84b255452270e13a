// A trial's YAML files stay YAML whatever the agent wrote: control characters an agent put in its
// messages or tool output (terminal escapes, C1 codes) are written as visible escapes.
#include <doctest/doctest.h>

#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "core/files.h"
#include "results/run_dir.h"
#include "support/manifest_helpers.h"
#include "trial/trial_files.h"

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
