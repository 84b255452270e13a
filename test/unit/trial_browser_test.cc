// The browser tool on the host, no daemon: Tolokaforge's actions parsed with their defaults and
// refusals, the 0–999 grid over the 1440×900 viewport, URLs limited to http(s), a strict schema
// honouring allowed_actions, the DevTools pipe's framing, and the task settings preflight reads:
// tools.agent.browser kept, tools.agent.mobile refused by name, browser only in a container.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agent/llm_anthropic.h"
#include "agent/llm_openai.h"
#include "support/paths.h"
#include "sweep/task_set.h"
#include "tools/browser_actions.h"
#include "tools/cdp_pipe.h"
#include "tools/schema.h"
#include "trial/browser_use.h"

using namespace forge;
namespace fs = std::filesystem;

namespace {

Result<tools::BrowserAction> parse(const std::string& text) {
  auto doc = json::parse(text, "action");
  REQUIRE(doc.has_value());
  return tools::parse_browser_action(*doc);
}

std::string error_of(const std::string& text) {
  auto a = parse(text);
  REQUIRE_FALSE(a.has_value());
  return a.error().message;
}

// A copy of the example browser task with `tools_block` in place of its tools block.
std::string task_with(const std::string& dir, const std::string& tools_block) {
  const std::string src = test::source_dir() + "/examples/tasks/browser-order";
  fs::copy(src, dir, fs::copy_options::recursive);
  std::ifstream in(dir + "/task.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  auto from = text.find("tools:\n"), to = text.find("user_simulator:");
  text = text.substr(0, from) + tools_block + text.substr(to);
  std::ofstream(dir + "/task.yaml") << text;
  return dir;
}

struct Scratch {
  Scratch() : path(fs::temp_directory_path() / ("forgectl-browser-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
  }
  ~Scratch() { fs::remove_all(path); }
  fs::path path;
};

}  // namespace

TEST_CASE("browser actions: Tolokaforge's defaults, and each type's missing argument refused by name") {
  auto a = parse(R"({"type":"type_text_at","x":250,"y":300,"text":"3"})");
  REQUIRE(a.has_value());
  CHECK(a->press_enter);
  CHECK(a->clear_before_typing);
  CHECK(a->magnitude == 800);
  CHECK(error_of(R"({"type":"click_at","x":5})") == "click_at needs x and y (0-999 on the viewport's grid)");
  CHECK(error_of(R"({"type":"navigate"})") == "navigate needs a url");
  CHECK(error_of(R"({"type":"search"})") == "search needs a query");
  CHECK(error_of(R"({"type":"drag_and_drop","x":1,"y":2})") == "drag_and_drop needs destination_x and destination_y");
  CHECK(error_of(R"({"type":"scroll_document","direction":"sideways"})") ==
        "scroll_document needs a direction: up, down, left or right");
  CHECK(error_of(R"({"type":"key_combination"})") == "key_combination needs keys");
  CHECK(error_of(R"({"type":"teleport"})") == "'teleport' is not a browser action type");
  CHECK(tools::browser_action_types().size() == 15);
}

TEST_CASE("browser grid: 0-999 maps onto the 1440x900 viewport; keys take Tolokaforge's aliases") {
  CHECK(tools::grid_to_pixel(0, 1440) == 0);
  CHECK(tools::grid_to_pixel(500, 1440) == doctest::Approx(720));
  CHECK(tools::grid_to_pixel(250, 900) == doctest::Approx(225));
  CHECK(tools::grid_to_pixel(999, 900) == doctest::Approx(899.1));
  CHECK(tools::browser_key("CTRL") == "Control");
  CHECK(tools::browser_key("cmd") == "Meta");
  CHECK(tools::browser_key("ENTER") == "Enter");
  CHECK(tools::browser_key("A") == "a");
}

TEST_CASE("browser URLs: http(s) only; a bare host gets http://; file:, chrome: and script URLs are refused") {
  CHECK(*tools::browser_url("http://mock-web:8080/") == "http://mock-web:8080/");
  CHECK(*tools::browser_url("mock-web:8080/order.html") == "http://mock-web:8080/order.html");
  CHECK(*tools::browser_url("HTTPS://x.test/") == "HTTPS://x.test/");
  for (const char* bad : {"file:///etc/passwd", "chrome://version", "javascript:alert(1)", "data:text/html,x",
                          "about:blank", "view-source:http://x/", "ftp://x/"}) {
    CAPTURE(bad);
    auto r = tools::browser_url(bad);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::kForbidden);
    CHECK(r.error().message.find("the browser opens only http:// and https:// pages") == 0);
  }
}

TEST_CASE("browser schema: strict, one `actions` array, allowed_actions narrows the enum") {
  auto all = tools::browser_spec({});
  CHECK(all.name == "browser");
  auto compiled = tools::CompiledSchema::compile(all.parameters, "browser");
  REQUIRE_MESSAGE(compiled.has_value(), (compiled ? "" : compiled.error().what()));
  auto doc = json::parse(all.parameters, "schema");
  REQUIRE(doc.has_value());
  CHECK(json::get_string(*doc, "type") == "object");
  CHECK_FALSE(json::get_bool(*doc, "additionalProperties", true));
  const auto& items = (*doc)["properties"]["actions"]["items"];
  CHECK_FALSE(json::get_bool(items, "additionalProperties", true));
  CHECK(items["properties"]["type"]["enum"].Size() == 15);
  for (const char* k : {"x", "y", "destination_x", "destination_y", "text", "press_enter", "clear_before_typing",
                        "keys", "direction", "magnitude", "url", "query"})
    CHECK_MESSAGE(items["properties"].HasMember(k), k);
  auto narrow = json::parse(tools::browser_spec({"navigate", "click_at"}).parameters, "schema");
  REQUIRE(narrow.has_value());
  CHECK((*narrow)["properties"]["actions"]["items"]["properties"]["type"]["enum"].Size() == 2);
}

TEST_CASE("cdp pipe framing: one JSON text and a NUL per message, split across reads") {
  std::string cmd = tools::cdp_command(7, "Page.navigate", R"({"url":"http://x/"})", "S1");
  CHECK(cmd ==
        std::string(R"({"id":7,"method":"Page.navigate","params":{"url":"http://x/"},"sessionId":"S1"})") + '\0');
  tools::CdpSplitter s;
  auto first = s.feed(std::string("{\"id\":1}") + '\0' + "{\"met");
  REQUIRE(first.has_value());
  CHECK(*first == std::vector<std::string>{"{\"id\":1}"});
  auto second = s.feed(std::string("hod\":\"x\"}") + '\0');
  REQUIRE(second.has_value());
  CHECK(*second == std::vector<std::string>{"{\"method\":\"x\"}"});
}

TEST_CASE("browser task settings: initial_url and allowed_actions kept; mobile and local browser refused by name") {
  Scratch s;
  fs::create_directories(s.path);
  auto ok = sweep::load_task_set({test::source_dir() + "/examples/tasks/browser-order"}, "", trial::PreflightInput{});
  INFO(ok.report());
  REQUIRE(ok.ok());
  const auto& b = ok.tasks[0].environment.tools.browser;
  REQUIRE(b.has_value());
  CHECK(b->initial_url == "http://mock-web:8080/");
  CHECK(trial::uses_browser(ok.tasks[0]));

  auto mobile =
      task_with((s.path / "mobile").string(),
                "tools:\n  agent:\n    enabled: [browser]\n    mobile: {apps: [mail]}\n  user:\n    enabled: []\n");
  auto m = sweep::load_task_set({mobile}, "", trial::PreflightInput{});
  CHECK_FALSE(m.ok());
  CHECK(m.report().find("tools.agent.mobile (Tolokaforge's mobile-viewport browser with apps) is not supported") !=
        std::string::npos);

  auto bad = task_with(
      (s.path / "bad").string(),
      "tools:\n  agent:\n    enabled: [browser]\n    browser: {allowed_actions: [fly]}\n  user:\n    enabled: []\n");
  auto bb = sweep::load_task_set({bad}, "", trial::PreflightInput{});
  CHECK(bb.report().find("tools.agent.browser.allowed_actions: 'fly' is not a browser action type") !=
        std::string::npos);

  auto local = task_with((s.path / "local").string(),
                         "tools:\n  executor: local\n  agent:\n    enabled: [browser]\n  user:\n    enabled: []\n");
  auto l = sweep::load_task_set({local}, "", trial::PreflightInput{});
  CHECK_FALSE(l.ok());
  CHECK(l.report().find("tool 'browser' runs Chromium in a container of its own") != std::string::npos);
}

namespace {

// A conversation whose last tool result carries a screenshot.
ChatRequest pictured_request() {
  ChatRequest req;
  req.messages.push_back({ChatMessage::Role::kUser, "order it"});
  ChatMessage call{ChatMessage::Role::kAssistant, ""};
  call.tool_calls.push_back({"c1", "browser", R"({"actions":[{"type":"screenshot"}]})", "p1", ""});
  req.messages.push_back(call);
  ChatMessage result{ChatMessage::Role::kTool, "Screenshot taken (PNG, 3 bytes, 1440x900), attached as an image."};
  result.tool_call_id = "c1";
  result.name = "browser";
  result.images.push_back({"image/png", "iVBO"});
  req.messages.push_back(result);
  return req;
}

json::Document body_of(const Result<std::string>& body) {
  REQUIRE_MESSAGE(body.has_value(), (body ? "" : body.error().what()));
  auto doc = json::parse(*body, "request body");
  REQUIRE(doc.has_value());
  return std::move(*doc);
}

}  // namespace

TEST_CASE("browser screenshots: an image block for Anthropic and OpenAI-compatible providers, a note for the rest") {
  agent::ResolvedModel m;
  m.config.provider = "anthropic";
  m.wire_name = "claude-sonnet-4";
  auto a = body_of(agent::anthropic_request_body(m, pictured_request()));
  const auto& result = a["messages"][2]["content"][0];
  CHECK(json::get_string(result, "type") == "tool_result");
  REQUIRE(result["content"].IsArray());
  CHECK(json::get_string(result["content"][0], "type") == "text");
  const auto& img = result["content"][1];
  CHECK(json::get_string(img, "type") == "image");
  CHECK(json::get_string(img["source"], "type") == "base64");
  CHECK(json::get_string(img["source"], "media_type") == "image/png");
  CHECK(json::get_string(img["source"], "data") == "iVBO");

  m.config.provider = "openai";
  m.wire_name = "gpt-4o";
  auto o = body_of(agent::openai_request_body(m, pictured_request()));
  REQUIRE(o["messages"].Size() == 4);
  CHECK(json::get_string(o["messages"][2], "role") == "tool");
  CHECK(o["messages"][2]["content"].IsString());
  const auto& user = o["messages"][3];
  CHECK(json::get_string(user, "role") == "user");
  CHECK(json::get_string(user["content"][0], "text") == "Image returned by tool call p1 (browser):");
  CHECK(json::get_string(user["content"][1], "type") == "image_url");
  CHECK(json::get_string(user["content"][1]["image_url"], "url") == "data:image/png;base64,iVBO");

  m.config.provider = "vllm";
  auto v = body_of(agent::openai_request_body(m, pictured_request()));
  REQUIRE(v["messages"].Size() == 3);
  CHECK(json::get_string(v["messages"][2], "content")
            .find("[1 image was returned and not shown: provider 'vllm' is sent text only]") != std::string::npos);
}
