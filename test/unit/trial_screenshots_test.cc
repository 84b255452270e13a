// The agent's screenshots in the trial's record: written under screenshots/ as they are taken
// (before the model's next turn), bounded in count and size with the drops counted, named by
// forgectl alone, referenced from trajectory.yaml, trajectory.atif.json and trial.json, shown on
// trial.html where they were taken and listed by `forgectl show`; an earlier attempt's pruned.
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "agent/episode.h"
#include "core/files.h"
#include "core/json.h"
#include "core/limits.h"
#include "core/strings.h"
#include "results/report_files.h"
#include "results/run_dir.h"
#include "results/screenshots.h"
#include "results/show.h"
#include "results/trial_detail.h"
#include "support/atif_check.h"
#include "support/manifest_helpers.h"
#include "tools/builtin_tools.h"
#include "tools/executor.h"
#include "trial/trial_files.h"

using namespace forge;
namespace fs = std::filesystem;

namespace {

// A 1x1 PNG.
const std::string kPng =
    *base64_decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==");
const std::string kPng64 = base64_encode(kPng);

ChatMessage said(ChatMessage::Role role, std::string text) { return ChatMessage{role, std::move(text)}; }

// An agent that calls `browser` once, then answers; on its second turn it notes whether the
// screenshot of the first was on disk already.
class LooksTwice : public agent::Agent {
 public:
  explicit LooksTwice(std::string dir) : dir_(std::move(dir)) {}
  std::string kind() const override { return "scripted"; }
  Result<ChatResponse> next(const std::vector<ChatMessage>&, const std::vector<ToolDecl>&, Deadline) override {
    ChatResponse r;
    r.cost_usd = 0.0;
    if (turn_++ == 0) {
      r.message = said(ChatMessage::Role::kAssistant, "");
      r.message.tool_calls = {{"c1", "browser", R"({"actions":[{"type":"screenshot"}]})"}};
      return r;
    }
    on_disk_at_second_turn = fs::exists(fs::path(dir_) / "screenshots" / "001.png");
    r.message = said(ChatMessage::Role::kAssistant, "The page is blank. ###STOP###");
    return r;
  }
  bool on_disk_at_second_turn = false;

 private:
  std::string dir_;
  int turn_ = 0;
};

// A trial whose browser call returned two images: one kept, one dropped.
trial::TrialResult shot_trial() {
  trial::TrialResult r;
  r.task_id = "shop";
  r.trial_index = 0;
  r.agent = "llm:fast";
  r.episode.messages.push_back(said(ChatMessage::Role::kUser, "Look at the shop."));
  ChatMessage call = said(ChatMessage::Role::kAssistant, "");
  call.tool_calls = {{"fc-1", "browser", R"({"actions":[{"type":"screenshot"}]})", "c1", ""}};
  r.episode.messages.push_back(call);
  ChatMessage result = said(ChatMessage::Role::kTool, "Screenshot taken (PNG, 70 bytes, 1x1), attached as an image.");
  result.tool_call_id = "fc-1";
  result.name = "browser";
  result.images = {{"image/png", kPng64, "screenshots/001.png"}, {"image/png", kPng64, ""}};
  r.episode.messages.push_back(result);
  r.episode.messages.push_back(said(ChatMessage::Role::kAssistant, "Seen. ###STOP###"));
  r.screenshots = 1;
  r.screenshots_dropped = 1;
  return r;
}

}  // namespace

TEST_CASE("screenshots: kept as screenshots/NNN.png within the limits, the rest dropped and counted") {
  test::TempFiles t("shots");
  const std::string dir = t.file("trial");
  fs::create_directories(dir + "/screenshots");
  REQUIRE(write_file_atomic(dir + "/screenshots/007.png", "an earlier attempt's").has_value());
  results::ScreenshotStore store(dir);
  auto first = store.keep("image/png", kPng64);
  REQUIRE(first.has_value());
  CHECK(*first == "screenshots/001.png");
  CHECK(read_text(dir + "/screenshots/001.png").value() == kPng);
  CHECK_FALSE(fs::exists(dir + "/screenshots/007.png"));  // the first keep clears an earlier attempt's

  CHECK_FALSE(store.keep("image/jpeg", kPng64).has_value());
  CHECK_FALSE(store.keep("image/png", base64_encode("GIF89a not a png")).has_value());
  CHECK_FALSE(store.keep("image/png", "!!not base64!!").has_value());
  const std::string huge = kPng + std::string(limits::kMaxScreenshotBytes, 'x');
  auto big = store.keep("image/png", base64_encode(huge));
  REQUIRE_FALSE(big.has_value());
  CHECK(big.error().message.find("limit") != std::string::npos);
  CHECK(store.kept() == 1);
  CHECK(store.dropped() == 4);

  for (int i = 1; i < limits::kMaxScreenshots; ++i) REQUIRE(store.keep("image/png", kPng64).has_value());
  auto over = store.keep("image/png", kPng64);
  REQUIRE_FALSE(over.has_value());
  CHECK(over.error().message.find("keeps 20 at most") != std::string::npos);
  CHECK(store.kept() == limits::kMaxScreenshots);
  CHECK(store.dropped() == 5);
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir + "/screenshots")) {
    CHECK(results::is_screenshot_path("screenshots/" + e.path().filename().string()));
    ++files;
  }
  CHECK(files == static_cast<std::size_t>(limits::kMaxScreenshots));

  CHECK(results::is_screenshot_path("screenshots/001.png"));
  for (const char* bad : {"screenshots/../x.png", "/screenshots/001.png", "screenshots/1.png", "screenshots/001.png\"",
                          "screenshots/001.svg", "other/001.png", "screenshots/0a1.png"})
    CHECK_FALSE(results::is_screenshot_path(bad));
}

TEST_CASE("screenshots: the episode keeps each image as the tool returns it, before the model's next turn") {
  test::TempFiles t("shots-episode");
  const std::string dir = t.file("trial");
  tools::ExecutorConfig c;
  c.tools = {std::make_shared<tools::FunctionTool>(
      tools::ToolSpec{"browser", "looks",
                      R"({"type":"object","properties":{"actions":{"type":"array"}},"additionalProperties":false})"},
      [](const json::Value&, const tools::CallContext& ctx) -> Result<std::string> {
        ctx.images->push_back({"image/png", kPng64, ""});
        return std::string("Screenshot taken, attached as an image.");
      })};
  c.agent_enabled = {"browser"};
  auto ex = tools::ToolExecutor::create(std::move(c));
  REQUIRE(ex.has_value());
  results::ScreenshotStore store(dir);
  agent::EpisodeSpec spec;
  spec.max_turns = 3;
  spec.keep_image = [&](const ImagePart& img) {
    auto kept = store.keep(img.media_type, img.base64);
    return kept ? *kept : std::string();
  };
  LooksTwice agent(dir);
  auto ep = agent::run_episode(agent, nullptr, **ex, spec);
  CHECK(agent.on_disk_at_second_turn);
  const ChatMessage* result = nullptr;
  for (const auto& m : ep.messages)
    if (m.role == ChatMessage::Role::kTool) result = &m;
  REQUIRE(result);
  REQUIRE(result->images.size() == 1);
  CHECK(result->images[0].path == "screenshots/001.png");
  CHECK(result->images[0].base64 == kPng64);  // the model still gets the image itself
}

TEST_CASE("screenshots: referenced from trajectory.yaml, ATIF and trial.json, shown on trial.html and by show") {
  test::TempFiles t("shots-record");
  const std::string run_dir = t.file("run");
  auto dir = results::RunDir::open(run_dir, [](std::string_view s) { return std::string(s); });
  REQUIRE(dir.has_value());
  const std::string tdir = run_dir + "/trials/shop/0";
  results::ScreenshotStore store(tdir);
  REQUIRE(store.keep("image/png", kPng64).has_value());
  REQUIRE(write_file_atomic(tdir + "/screenshots/009.png", "a stale file").has_value());  // as if an earlier attempt's

  trial::TrialResult r = shot_trial();
  REQUIRE(trial::write_trial_files(*dir, r, "task_id: shop\n").has_value());
  CHECK(read_text(tdir + "/screenshots/001.png").value() == kPng);
  CHECK_FALSE(fs::exists(tdir + "/screenshots/009.png"));  // pruned: no message names it

  const std::string traj = read_text(tdir + "/trajectory.yaml").value();
  CHECK(traj.find("images: [screenshots/001.png]") != std::string::npos);
  CHECK(traj.find("images_dropped: 1") != std::string::npos);

  json::Document atif;
  REQUIRE_FALSE(json::parse_document(atif, read_text(tdir + "/trajectory.atif.json").value()));
  CHECK(test::atif_v17_violations(atif) == std::vector<std::string>{});
  const auto& content = atif["steps"][1]["observation"]["results"][0]["content"];
  REQUIRE(content.IsArray());
  REQUIRE(content.Size() == 2);  // the text, then the one image kept
  CHECK(json::get_string(content[0], "type") == "text");
  CHECK(json::get_string(content[1]["source"], "path") == "screenshots/001.png");
  CHECK(json::get_string(content[1]["source"], "media_type") == "image/png");
  CHECK(fs::exists(fs::path(tdir) / json::get_string(content[1]["source"], "path")));
  // The checker's image rules can fail: each of these is one violation.
  const std::string atif_text = read_text(tdir + "/trajectory.atif.json").value();
  auto broken = [&](const std::function<void(json::Value&, json::Document&)>& change) {
    json::Document d;
    REQUIRE_FALSE(json::parse_document(d, atif_text));
    change(d["steps"][1]["observation"]["results"][0]["content"], d);
    return test::atif_v17_violations(d).size();
  };
  CHECK(broken([](json::Value& c, json::Document&) { c[1]["source"].RemoveMember("path"); }) == 1);
  CHECK(broken([](json::Value& c, json::Document&) { c[1]["source"]["media_type"].SetString("image/svg+xml"); }) == 1);
  CHECK(broken([](json::Value& c, json::Document&) { c[1]["type"].SetString("picture"); }) == 1);
  CHECK(broken([](json::Value& c, json::Document& d) { c[0].AddMember("url", "x", d.GetAllocator()); }) == 1);

  auto detail = results::TrialDetail::read(tdir + "/trial.json");
  REQUIRE(detail.has_value());
  CHECK(detail->messages[2].images == std::vector<std::string>{"screenshots/001.png"});
  CHECK(detail->messages[2].images_dropped == 1);

  results::TrialRecord rec = trial::to_record(r);
  CHECK(results::to_json_line(rec).find(R"("screenshots":{"kept":1,"dropped":1})") != std::string::npos);
  REQUIRE(dir->append_trial(rec).has_value());
  REQUIRE(results::write_reports(run_dir).has_value());
  const std::string page = read_text(tdir + "/trial.html").value();
  const auto img = page.find("<img src=\"screenshots&#47;001.png\"");
  REQUIRE(img != std::string::npos);
  CHECK(page.find("Screenshot taken (PNG") < img);  // at the step that took it
  CHECK(page.find("Seen. ###STOP###") > img);       // before what came after
  CHECK(page.find("1 screenshot was not kept") != std::string::npos);
  CHECK(page.find("1 kept in screenshots/ · 1 dropped") != std::string::npos);

  results::ShowRequest sr;
  sr.dir = run_dir;
  sr.task = "shop";
  sr.index = 0;
  auto shown = results::show(sr);
  REQUIRE(shown.has_value());
  CHECK(shown->find("screenshots: 1 kept, 1 dropped") != std::string::npos);
  CHECK(shown->find("trials/shop/0/screenshots/001.png (message 3)") != std::string::npos);
}

TEST_CASE("screenshots: a trial.json naming other paths shows none of them; a retry without screenshots prunes") {
  test::TempFiles t("shots-hostile");
  const std::string run_dir = t.file("run");
  auto dir = results::RunDir::open(run_dir, [](std::string_view s) { return std::string(s); });
  REQUIRE(dir.has_value());
  trial::TrialResult r = shot_trial();
  r.episode.messages[2].images = {{"image/png", kPng64, "screenshots/001.png"}};
  REQUIRE(trial::write_trial_files(*dir, r, "").has_value());
  const std::string tdir = run_dir + "/trials/shop/0";
  // A hand edit (or a merged run) naming paths of its own making.
  std::string text = read_text(tdir + "/trial.json").value();
  const std::string ours = R"("images":["screenshots/001.png"])";
  REQUIRE(text.find(ours) != std::string::npos);
  text.replace(text.find(ours), ours.size(),
               R"X("images":["..\/..\/..\/secret.png","screenshots/002.png\" onerror=\"alert(1)","http://x/y.png"])X");
  REQUIRE(write_file_atomic(tdir + "/trial.json", text).has_value());
  REQUIRE(dir->append_trial(trial::to_record(r)).has_value());
  REQUIRE(results::write_reports(run_dir).has_value());
  const std::string page = read_text(tdir + "/trial.html").value();
  CHECK(page.find("<img") == std::string::npos);
  CHECK(page.find("secret") == std::string::npos);
  CHECK(page.find("onerror") == std::string::npos);

  // The next attempt took none: the first one's files go with its record.
  fs::create_directories(tdir + "/screenshots");
  REQUIRE(write_file_atomic(tdir + "/screenshots/001.png", kPng).has_value());
  trial::TrialResult retry = shot_trial();
  retry.attempt = 2;
  retry.episode.messages[2].images.clear();
  retry.screenshots = retry.screenshots_dropped = 0;
  REQUIRE(trial::write_trial_files(*dir, retry, "").has_value());
  CHECK_FALSE(fs::exists(tdir + "/screenshots"));
  CHECK(results::to_json_line(trial::to_record(retry)).find("screenshots") == std::string::npos);
}
