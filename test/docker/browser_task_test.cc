// The `browser` tool against the real daemon: the example shop task passes under its reference
// solution and fails under noop; the browser container is hardened, sits on the trial's internal
// network only (the trial's mock-web answers; a fake internet server on a network of the test's own
// does not, nor do file:// or chrome:// pages), and nothing of it is left after teardown; a real
// screenshot reaches the providers as an image and the trial's record as a PNG file on trial.html.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>

#include "core/files.h"
#include "engine/containers.h"
#include "engine/exec.h"
#include "results/report_files.h"
#include "results/run_dir.h"
#include "stack/browser_image.h"
#include "support/containers.h"
#include "support/manifest_helpers.h"
#include "support/paths.h"
#include "support/browser_image.h"
#include "support/scripted_trial.h"
#include "support/trial_rig.h"
#include "tools/builtin_tools.h"
#include "trial/browser_use.h"
#include "trial/trial_files.h"

using namespace forge;
using namespace forge::test;

namespace {

std::string actions(const std::string& items) { return R"({"actions":[)" + items + "]}"; }

// One browser tool call: its output, or "Error: …".
std::string call(tools::Tool& tool, const std::string& args) {
  auto doc = json::parse(args, "test arguments");
  REQUIRE(doc.has_value());
  auto r = tool.call(*doc, {Deadline::in(Millis(60000))});
  return r ? *r : "Error: " + r.error().message;
}

}  // namespace

TEST_CASE("browser task: the example shop order passes under the oracle, fails under noop, leaves nothing") {
  need_browser_image();
  (void)docker_env().services_image;
  manifest::TaskConfig task = load_as_run(source_dir() + "/examples/tasks/browser-order");
  REQUIRE(trial::uses_browser(task));
  {
    Rig rig;
    auto r = rig.run(task, trial::AgentChoice{trial::AgentChoice::Kind::kOracle});
    CAPTURE(r.error);
    REQUIRE(r.outcome == results::Outcome::kGraded);
    REQUIRE(r.tool_log.size() == 3);
    const std::string& shop = r.tool_log[0].record.content;
    CAPTURE(shop);
    CHECK(shop.find("Title: Order Blue Widget - Acme Shop") != std::string::npos);
    CHECK(shop.find("[input number] Quantity @ (250, 300)") != std::string::npos);
    const std::string& order = r.tool_log[1].record.content;
    CAPTURE(order);
    CHECK(r.tool_log[1].record.outcome == tools::ToolOutcome::Kind::kOk);
    CHECK(order.find("Order confirmed: BW-3-L8MJ (3 x Blue Widget for Dana Reyes)") != std::string::npos);
    CHECK(r.grade.binary_pass);
    CHECK(rig.left_nothing());
  }
  {
    Rig rig;
    auto r = rig.run(task, trial::AgentChoice{trial::AgentChoice::Kind::kNoop});
    CHECK(r.outcome == results::Outcome::kGraded);
    CHECK_FALSE(r.grade.binary_pass);
    CHECK(rig.left_nothing());
  }
}

TEST_CASE("browser: hardened container on the trial's network only; file://, chrome:// and other networks refused") {
  need_browser_image();
  (void)docker_env().services_image;
  TempDir dir;
  std::filesystem::copy_file(source_dir() + "/examples/tasks/browser-order/compose.yaml", dir.path() + "/compose.yaml");
  dir.write("environment.yaml", "network_policy: no_internet\ncompose_file: compose.yaml\n");
  // A fake internet server of the test's own, on a network the trial's stack is not on.
  TestNetwork edge(engine::NetworkSpec{.name = "fg-test-edge-" + random_hex(4)});
  engine::ContainerSpec fake;
  fake.cmd = std::vector<std::string>{
      "sh", "-c", "mkdir -p /tmp/www && echo FAKE-INTERNET-7731 > /tmp/www/index.html && httpd -f -p 8080 -h /tmp/www"};
  fake.network = edge.id;
  fake.host.network_mode = edge.id;
  TestContainer server(fake);
  auto fake_info = engine::inspect_container(*docker_env().client, server.id);
  REQUIRE(fake_info.has_value());
  REQUIRE_FALSE(fake_info->networks.empty());
  const std::string fake_ip = fake_info->networks.begin()->second.ip_address;
  REQUIRE_FALSE(fake_ip.empty());

  std::string browser_id;
  {
    TestStack stack(dir.path() + "/environment.yaml");
    auto started = trial::start_browser(*docker_env().client, stack.result, Deadline::in(Millis(60000)));
    REQUIRE_MESSAGE(started.has_value(), (started ? "" : started.error().what()));
    browser_id = started->container;

    auto info = engine::inspect_container(*docker_env().client, browser_id);
    REQUIRE(info.has_value());
    CHECK(info->user == "65534:65534");
    CHECK(info->host.cap_drop == std::vector<std::string>{"ALL"});
    CHECK(std::find(info->host.security_opt.begin(), info->host.security_opt.end(), "no-new-privileges") !=
          info->host.security_opt.end());
    CHECK(info->host.readonly_rootfs);
    CHECK(info->host.tmpfs.count("/tmp") == 1);
    CHECK(info->host.memory > 0);
    CHECK(info->host.pids_limit > 0);
    CHECK(info->networks.size() == 1);
    CHECK(info->labels.at(stack::kLabelStack) == stack.result.name);

    // Nothing of the browser listens: its control is the exec's pipe, no port a page or the agent's
    // bash could find (TCP state 0A is LISTEN).
    engine::ExecOptions listen;
    listen.cmd = {"cat", "/proc/net/tcp", "/proc/net/tcp6"};
    listen.user = stack::kBrowserUser;
    listen.timeout = Millis(10000);
    auto sockets = engine::exec_run(*docker_env().client, browser_id, listen);
    REQUIRE(sockets.has_value());
    CAPTURE(sockets->out);
    // Docker's embedded DNS (127.0.0.11, 0B00007F) listens in every user-network container; nothing else may.
    std::istringstream lines(sockets->out);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream f(line);
      std::string slot, local, remote, state;
      f >> slot >> local >> remote >> state;
      if (state == "0A") CHECK_MESSAGE(local.rfind("0B00007F:", 0) == 0, line);
    }

    tools::BuiltinOptions o;
    o.browser.session = started->session;
    auto tool = tools::browser_tool(o);
    REQUIRE(tool);
    // The honest control: the trial's own mock-web answers.
    std::string ok = call(*tool, actions(R"({"type":"navigate","url":"http://mock-web:8080/health"})"));
    CAPTURE(ok);
    CHECK(ok.find("URL: http://mock-web:8080/health") != std::string::npos);
    CHECK(ok.find("healthy") != std::string::npos);
    for (const char* url : {"file:///etc/passwd", "chrome://version", "view-source:http://mock-web:8080/",
                            "javascript:alert(1)", "data:text/html,hi"}) {
      std::string out = call(*tool, actions(std::string(R"({"type":"navigate","url":")") + url + "\"}"));
      CAPTURE(out);
      CHECK(out.find("Error: action 1 (navigate): the browser opens only http:// and https:// pages") == 0);
    }
    std::string outside = call(*tool, actions(R"({"type":"navigate","url":"http://)" + fake_ip + R"(:8080/"})"));
    CAPTURE(outside);
    CHECK(outside.find("FAKE-INTERNET-7731") == std::string::npos);
    std::string named = call(*tool, actions(R"({"type":"navigate","url":"http://example.com/"})"));
    CAPTURE(named);
    CHECK(named.find("ERR_NAME_NOT_RESOLVED") != std::string::npos);
  }
  // Teardown by the stack's labels took the browser too.
  CHECK_FALSE(engine::inspect_container(*docker_env().client, browser_id).has_value());
}

namespace {

// The screenshot the agent took, in the trial's record: a PNG file under screenshots/ (written
// during the episode), named from trial.html and trajectory.atif.json.
void check_recorded_screenshot(const trial::TrialResult& r, const std::string& run_dir) {
  auto text = [](const std::string& path) {
    auto t = read_text(path);
    return t ? *t : std::string();
  };
  const std::string tdir = run_dir + "/trials/" + r.task_id + "/0";
  const std::string png = text(tdir + "/screenshots/001.png");  // before the files are written
  REQUIRE(png.size() > 1000);
  CHECK(png.substr(0, 8) == "\x89PNG\r\n\x1a\n");
  CHECK(png.substr(12, 4) == "IHDR");
  CHECK(r.screenshots == 1);
  auto dir = results::RunDir::open(run_dir, [](std::string_view v) { return std::string(v); });
  REQUIRE(dir.has_value());
  REQUIRE(trial::write_trial_files(*dir, r, "").has_value());
  REQUIRE(dir->append_trial(trial::to_record(r)).has_value());
  REQUIRE(results::write_reports(run_dir).has_value());
  const std::string page = text(tdir + "/trial.html");
  CHECK(page.find("<img src=\"screenshots&#47;001.png\"") != std::string::npos);
  CHECK(text(tdir + "/trajectory.atif.json").find(R"("path":"screenshots/001.png")") != std::string::npos);
}

}  // namespace

TEST_CASE("browser screenshot: a real PNG reaches the scripted OpenAI and Anthropic servers as an image block") {
  need_browser_image();
  (void)docker_env().services_image;
  manifest::TaskConfig task = load_as_run(source_dir() + "/examples/tasks/browser-order");
  const std::string shot = actions(R"({"type":"open_web_browser"},{"type":"screenshot"})");
  for (const std::string provider : {"openai", "anthropic"}) {
    CAPTURE(provider);
    LlmTrialRig rig(provider, provider == "openai" ? "gpt-4o" : "claude-sonnet-4");
    auto& s = rig.h.server;
    if (provider == "openai") {
      s.push(200, fake_llm::openai_tool_call("call_1", "browser", shot));
      s.push(200, fake_llm::openai_text("I looked at the shop. ###STOP###"));
    } else {
      s.push(200, fake_llm::anthropic_tool_use("toolu_1", "browser", shot));
      s.push(200, fake_llm::anthropic_text("I looked at the shop. ###STOP###"));
    }
    TempFiles run("browser-shot");
    rig.env.record_dir = run.file("run") + "/trials/" + task.task_id + "/0";
    auto r = rig.run_llm(task);
    REQUIRE_MESSAGE(r.outcome == results::Outcome::kGraded, r.error);
    REQUIRE(r.tool_log.size() == 1);
    CHECK(r.tool_log[0].record.content.find("Screenshot taken (PNG, ") != std::string::npos);
    check_recorded_screenshot(r, run.file("run"));
    const json::Document second = rig.h.body(1);
    REQUIRE(second.IsObject());
    std::string data;
    for (const auto& m : second["messages"].GetArray()) {
      if (!m["content"].IsArray()) continue;
      for (const auto& part : m["content"].GetArray()) {
        if (provider == "openai" && json::get_string(part, "type") == "image_url")
          data = json::get_string(part["image_url"], "url");
        if (provider == "anthropic" && json::get_string(part, "type") == "tool_result" && part["content"].IsArray())
          for (const auto& inner : part["content"].GetArray())
            if (json::get_string(inner, "type") == "image") data = json::get_string(inner["source"], "data");
      }
    }
    CAPTURE(data.substr(0, 80));
    // PNG's signature, base64: iVBORw0KGgo.
    CHECK(data.find(provider == "openai" ? "data:image/png;base64,iVBORw0KGgo" : "iVBORw0KGgo") == 0);
    CHECK(data.size() > 1000);
    CHECK(rig.left_nothing());
  }
}

TEST_CASE("browser under limited_internet: the allowlisted upstream answers through the egress proxy, others do not") {
  need_browser_image();
  TempDir dir;
  std::filesystem::copy_file(source_dir() + "/examples/tasks/pinned-package/compose.yaml",
                             dir.path() + "/compose.yaml");
  dir.write("environment.yaml",
            "network_policy: limited_internet\nlimited_internet_allowlist: [pkgs.example.test]\n"
            "limited_internet_allow_http: true\ncompose_file: compose.yaml\n");
  TestStack stack(dir.path() + "/environment.yaml");
  auto started = trial::start_browser(*docker_env().client, stack.result, Deadline::in(Millis(60000)));
  REQUIRE_MESSAGE(started.has_value(), (started ? "" : started.error().what()));
  tools::BuiltinOptions o;
  o.browser.session = started->session;
  auto tool = tools::browser_tool(o);
  std::string allowed =
      call(*tool, actions(R"({"type":"navigate","url":"http://pkgs.example.test/simple/acme-cli/"})"));
  CAPTURE(allowed);
  CHECK(allowed.find("acme-cli 2.3.1 (latest)") != std::string::npos);
  // The same upstream under a name the allowlist lacks: the proxy refuses it.
  std::string other = call(*tool, actions(R"({"type":"navigate","url":"http://package-index/simple/acme-cli/"})"));
  CAPTURE(other);
  CHECK(other.find("acme-cli 2.3.1") == std::string::npos);
}
