// BrowserSession: Chromium's page over the DevTools pipe.
#include "tools/browser_session.h"

#include <cctype>

#include "core/strings.h"

namespace forge::tools {

namespace {

constexpr Millis kStartCap{20000};
// How long an input event has to start a navigation before the page counts as settled.
constexpr Millis kSettleWindow{250};

// 'text' for sh -c, whatever it holds.
std::string shell_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct KeyInfo {
  std::string key, code, text;
  int vk = 0;
};

KeyInfo key_info(const std::string& key) {
  static const std::vector<std::pair<std::string, int>> named = {
      {"Enter", 13},     {"Tab", 9},        {"Escape", 27},     {"Backspace", 8}, {"Delete", 46}, {"ArrowUp", 38},
      {"ArrowDown", 40}, {"ArrowLeft", 37}, {"ArrowRight", 39}, {"Home", 36},     {"End", 35},    {"PageUp", 33},
      {"PageDown", 34},  {"Space", 32},     {"Control", 17},    {"Shift", 16},    {"Alt", 18},    {"Meta", 91}};
  for (const auto& [name, vk] : named)
    if (name == key) {
      KeyInfo k{name == "Space" ? " " : name, name, "", vk};
      if (name == "Enter") k.text = "\r";
      if (name == "Space") k.text = " ", k.code = "Space";
      return k;
    }
  KeyInfo k{key, "", key.size() == 1 ? key : "", 0};
  if (key.size() == 1) {
    char c = key[0];
    if (std::isalpha(static_cast<unsigned char>(c))) {
      k.vk = std::toupper(static_cast<unsigned char>(c));
      k.code = std::string("Key") + static_cast<char>(k.vk);
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      k.vk = c;
      k.code = std::string("Digit") + c;
    }
  }
  return k;
}

}  // namespace

std::vector<std::string> browser_command(const BrowserLaunch& l) {
  std::string flags =
      " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --no-default-browser-check"
      " --user-data-dir=/tmp/profile --disk-cache-dir=/tmp/cache --disable-background-networking"
      " --disable-component-update --disable-sync --disable-extensions --disable-breakpad --mute-audio"
      " --hide-scrollbars --disable-features=Translate,MediaRouter,OptimizationHints --no-pings"
      " --window-size=" +
      std::to_string(l.width) + "," + std::to_string(l.height);
  if (!l.proxy_server.empty()) flags += " --proxy-server=" + shell_quote(l.proxy_server);
  if (!l.proxy_bypass.empty()) flags += " --proxy-bypass-list=" + shell_quote(l.proxy_bypass);
  // Chromium's own stdout would corrupt the pipe: it goes to stderr, the exec's second stream.
  return {"/bin/sh", "-c",
          "exec " + shell_quote(l.binary) + flags + " --remote-debugging-pipe about:blank 3<&0 4>&1 1>&2"};
}

Result<std::unique_ptr<BrowserSession>> BrowserSession::start(engine::Client& c, const BrowserLaunch& l,
                                                              Deadline deadline) {
  auto pipe = CdpPipe::start(c, l.container, browser_command(l), l.user);
  if (!pipe) return pipe.fail();
  const Deadline d = deadline.earlier(Deadline::in(kStartCap));
  auto stderr_of = [&](const Error& e) {
    std::string tail = trim((*pipe)->diagnostics());
    if (tail.size() > 600) tail = tail.substr(tail.size() - 600);
    return fail(e.code, "the browser did not start: " + e.message + (tail.empty() ? "" : "; its stderr: " + tail));
  };
  auto targets = (*pipe)->call("Target.getTargets", "{}", "", d);
  if (!targets) return stderr_of(targets.error());
  std::string target;
  if (const json::Value* infos = json::get_array(*targets, "targetInfos"))
    for (const auto& t : infos->GetArray())
      if (json::get_string(t, "type") == "page" && target.empty()) target = json::get_string(t, "targetId");
  if (target.empty()) {
    auto created = (*pipe)->call("Target.createTarget", R"({"url":"about:blank"})", "", d);
    if (!created) return stderr_of(created.error());
    target = json::get_string(*created, "targetId");
  }
  json::Writer w;
  w.begin_object().field("targetId", target).field("flatten", true).end_object();
  auto attached = (*pipe)->call("Target.attachToTarget", w.take(), "", d);
  if (!attached) return stderr_of(attached.error());
  std::unique_ptr<BrowserSession> s(
      new BrowserSession(std::move(*pipe), json::get_string(*attached, "sessionId"), l.width, l.height));
  json::Writer m;
  m.begin_object().field("width", l.width).field("height", l.height).field("deviceScaleFactor", 1);
  m.field("mobile", false).end_object();
  for (auto [method, params] :
       {std::pair<const char*, std::string>{"Page.enable", "{}"}, {"Emulation.setDeviceMetricsOverride", m.take()}})
    if (auto r = s->call(method, params, d); !r) return stderr_of(r.error());
  return s;
}

Result<json::Document> BrowserSession::call(std::string_view method, std::string_view params, Deadline deadline) {
  return pipe_->call(method, params, session_, deadline);
}

Status BrowserSession::wait_load(Deadline deadline) {
  auto loaded = pipe_->wait_event("Page.loadEventFired", session_, deadline);
  if (!loaded) return loaded.fail();
  if (!*loaded)
    return fail(Errc::kTimeout, "the page did not finish loading within " +
                                    std::to_string(kNavigationCap.count() / 1000) + " s; it is shown as far as it got");
  return {};
}

Status BrowserSession::navigate(const std::string& url, Deadline deadline) {
  const Deadline d = deadline.earlier(Deadline::in(kNavigationCap));
  pipe_->clear_events();
  json::Writer w;
  w.begin_object().field("url", url).end_object();
  auto r = call("Page.navigate", w.take(), d);
  if (!r) return r.fail();
  opened_ = true;
  if (std::string err = json::get_string(*r, "errorText"); !err.empty())
    return fail(Errc::kUnavailable, "the browser could not load " + url + ": " + err);
  if (json::get_string(*r, "loaderId").empty()) return {};  // the same document (a #fragment)
  return wait_load(d);
}

Result<bool> BrowserSession::history(int delta, Deadline deadline) {
  auto h = call("Page.getNavigationHistory", "{}", deadline);
  if (!h) return h.fail();
  const json::Value* entries = json::get_array(*h, "entries");
  const std::int64_t at = json::get_int(*h, "currentIndex") + delta;
  if (!entries || at < 0 || at >= static_cast<std::int64_t>(entries->Size())) return false;
  const Deadline d = deadline.earlier(Deadline::in(kNavigationCap));
  pipe_->clear_events();
  json::Writer w;
  w.begin_object().field("entryId", json::get_int((*entries)[static_cast<rapidjson::SizeType>(at)], "id"));
  if (auto r = call("Page.navigateToHistoryEntry", w.end_object().take(), d); !r) return r.fail();
  if (auto st = settle(d); !st) return st.fail();
  return true;
}

Result<std::string> BrowserSession::evaluate(std::string_view expression, Deadline deadline) {
  json::Writer w;
  w.begin_object().field("expression", expression).field("returnByValue", true).end_object();
  auto r = call("Runtime.evaluate", w.take(), deadline);
  if (!r) return r.fail();
  if (const json::Value* ex = json::get_object(*r, "exceptionDetails"))
    return fail(Errc::kInvalid, "the page's script failed: " + json::get_string(*ex, "text"));
  const json::Value* res = json::get_object(*r, "result");
  if (!res) return std::string();
  if (res->HasMember("value") && (*res)["value"].IsString()) return json::get_string(*res, "value");
  if (res->HasMember("value")) return json::to_string((*res)["value"]);
  return std::string();
}

Status BrowserSession::mouse(std::string_view type, double x, double y, Deadline deadline, double dx, double dy) {
  json::Writer w;
  w.begin_object().field("type", type).key("x").num(x).key("y").num(y);
  if (type == "mousePressed" || type == "mouseReleased") w.field("button", "left").field("clickCount", 1);
  if (type == "mouseWheel") w.key("deltaX").num(dx).key("deltaY").num(dy);
  auto r = call("Input.dispatchMouseEvent", w.end_object().take(), deadline);
  return r ? Status() : r.fail();
}

Status BrowserSession::click(double x, double y, Deadline deadline) {
  for (const char* t : {"mouseMoved", "mousePressed", "mouseReleased"})
    if (auto st = mouse(t, x, y, deadline); !st) return st;
  return {};
}

Status BrowserSession::insert_text(std::string_view text, Deadline deadline) {
  json::Writer w;
  w.begin_object().field("text", text).end_object();
  auto r = call("Input.insertText", w.take(), deadline);
  return r ? Status() : r.fail();
}

Status BrowserSession::press_key(const std::string& key, int modifiers, Deadline deadline) {
  KeyInfo k = key_info(key);
  // Text only without Ctrl/Alt/Meta: Ctrl+A selects, it does not type an "a".
  const bool typing = (modifiers & ~8) == 0 && !k.text.empty();
  for (const char* type : {"keyDown", "keyUp"}) {
    json::Writer w;
    w.begin_object().field("type", type);
    w.field("key", k.key).field("modifiers", modifiers);
    if (!k.code.empty()) w.field("code", k.code);
    if (k.vk) w.field("windowsVirtualKeyCode", k.vk).field("nativeVirtualKeyCode", k.vk);
    if (typing && std::string_view(type) == "keyDown") w.field("text", k.text).field("unmodifiedText", k.text);
    if (key == "a" && (modifiers & (2 | 4))) w.key("commands").begin_array().str("selectAll").end_array();
    if (auto r = call("Input.dispatchKeyEvent", w.end_object().take(), deadline); !r) return r.fail();
  }
  return {};
}

Result<std::string> BrowserSession::screenshot(Deadline deadline) {
  auto r = call("Page.captureScreenshot", R"({"format":"png"})", deadline);
  if (!r) return r.fail();
  return json::get_string(*r, "data");
}

Status BrowserSession::settle(Deadline deadline) {
  auto started = pipe_->wait_event("Page.frameStartedLoading", session_, deadline.earlier(Deadline::in(kSettleWindow)));
  if (!started) return started.fail();
  if (!*started) return {};
  opened_ = true;
  return wait_load(deadline.earlier(Deadline::in(kNavigationCap)));
}

}  // namespace forge::tools
