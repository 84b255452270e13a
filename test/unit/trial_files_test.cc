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
  const std::string hostile =
      "done \x1b[2J\x1b[31mPASS\x07 \xc2\x9b"
      "31m\x7f end\r\nline two";
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
      raw = raw || (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f ||
            (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0x9b);
    }
    CHECK_FALSE(raw);
    CHECK(text.find("PASS") != std::string::npos);
    CHECK_NOTHROW(YAML::Load(text));
  }
}
