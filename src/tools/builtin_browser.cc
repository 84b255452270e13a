// browser: Tolokaforge's browser tool (actions on a 0–999 grid) over the trial's own Chromium.
#include <algorithm>
#include <atomic>
#include <thread>

#include "core/limits.h"
#include "core/strings.h"
#include "tools/browser_actions.h"
#include "tools/browser_js.h"
#include "tools/browser_session.h"
#include "tools/builtin_tools.h"

namespace forge::tools {

namespace {

constexpr std::size_t kMaxVisibleText = 4000;
constexpr std::size_t kMaxElements = 120;

// `s` cut to at most `cap` bytes at a UTF-8 boundary.
std::string clip_utf8(std::string s, std::size_t cap) {
  if (s.size() <= cap) return s;
  std::size_t n = cap;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  s.resize(n);
  return s + "\n[visible text truncated]";
}

// The page as the model reads it (Tolokaforge's observation, bounded).
Result<std::string> observe(BrowserSession& b, Deadline d) {
  auto text = b.evaluate(kObserveJs, d);
  if (!text) return text.fail_with("reading the page");
  auto doc = json::parse(*text, "the page observation");
  if (!doc) return doc.fail();
  std::string out = "URL: " + json::get_string(*doc, "url") + "\nTitle: " + json::get_string(*doc, "title") +
                    "\n\nVisible text:\n" + clip_utf8(json::get_string(*doc, "text"), kMaxVisibleText);
  const json::Value* els = json::get_array(*doc, "elements");
  if (els && !els->Empty()) {
    out += "\n\nClickable and editable elements (x, y on the 0-999 grid):\n";
    std::size_t n = 0;
    for (const auto& e : els->GetArray()) {
      if (++n > kMaxElements) break;
      out += "  [" + json::get_string(e, "tag");
      if (std::string t = json::get_string(e, "type"); !t.empty()) out += " " + t;
      out += "]";
      if (std::string l = json::get_string(e, "label"); !l.empty()) out += " " + l;
      if (std::string h = json::get_string(e, "href"); !h.empty()) out += " (href: " + h.substr(0, 200) + ")";
      out += " @ (" + std::to_string(json::get_int(e, "x")) + ", " + std::to_string(json::get_int(e, "y")) + ")\n";
    }
  }
  return out;
}

class BrowserActions {
 public:
  explicit BrowserActions(BrowserRoute route) : r_(std::move(route)) {}

  Result<std::string> run(const json::Value& args, const CallContext& ctx) {
    BrowserSession& b = *r_.session;
    std::lock_guard lock(b.mutex());
    const json::Value* actions = json::get_array(args, "actions");
    if (!actions || actions->Empty()) return fail(Errc::kInvalid, "actions must be a non-empty array");
    std::vector<BrowserAction> parsed;
    for (const auto& item : actions->GetArray()) {
      auto a = parse_browser_action(item);
      if (!a) return a.fail_with("action " + std::to_string(parsed.size() + 1));
      if (!r_.allowed_actions.empty() &&
          std::find(r_.allowed_actions.begin(), r_.allowed_actions.end(), a->type) == r_.allowed_actions.end())
        return fail(Errc::kForbidden, "action " + std::to_string(parsed.size() + 1) + ": '" + a->type +
                                          "' is not allowed in this task (tools.agent.browser.allowed_actions)");
      parsed.push_back(std::move(*a));
    }
    std::string out;
    if (!b.opened() && !r_.initial_url.empty()) {
      if (auto st = b.navigate(r_.initial_url, ctx.deadline); !st && st.error().code != Errc::kTimeout)
        return st.fail_with("opening the task's start page " + r_.initial_url);
    }
    for (std::size_t i = 0; i < parsed.size(); ++i) {
      const BrowserAction& a = parsed[i];
      b.begin_action();
      auto line = act(b, a, ctx);
      if (!line) {
        return fail(line.error().code, (out.empty() ? "" : out + "\n") + "action " + std::to_string(i + 1) + " (" +
                                           a.type + "): " + line.error().message);
      }
      out += *line + "\n";
      const bool last_of_run = i + 1 == parsed.size() || !changes_page(parsed[i + 1].type);
      if (changes_page(a.type) && last_of_run && b.opened()) {
        auto page = observe(b, ctx.deadline);
        if (!page) return page.fail_with("action " + std::to_string(i + 1) + " (" + a.type + ")");
        out += "\n" + *page + "\n";
      }
    }
    return trim(out);
  }

 private:
  double px(int g) const { return grid_to_pixel(g, r_.session->width()); }
  double py(int g) const { return grid_to_pixel(g, r_.session->height()); }

  Result<std::string> act(BrowserSession& b, const BrowserAction& a, const CallContext& ctx) {
    const Deadline d = ctx.deadline;
    const std::string& t = a.type;
    if (t == "open_web_browser") return b.opened() ? "The browser is open." : "The browser is open (a blank page).";
    if (t == "navigate" || t == "search") {
      std::string target;
      if (t == "search") {
        if (r_.search_url.empty())
          return fail(Errc::kUnsupported, "there is no search page in this task (its stack has no mock-web)");
        target = r_.search_url + "?q=" + url_encode(a.query);
      } else {
        auto url = browser_url(a.url);
        if (!url) return url.fail();
        target = *url;
      }
      if (auto st = b.navigate(target, d); !st) {
        if (st.error().code != Errc::kTimeout) return st.fail();
        return "Opened " + target + " (" + st.error().message + ")";
      }
      return "Opened " + target;
    }
    if (t == "wait_5_seconds") {
      std::this_thread::sleep_for(std::min<Millis>(Millis(5000), d.remaining()));
      return "Waited 5 seconds.";
    }
    if (t == "go_back" || t == "go_forward") {
      auto moved = b.history(t == "go_back" ? -1 : 1, d);
      if (!moved) return moved.fail();
      return *moved ? std::string(t == "go_back" ? "Went back." : "Went forward.")
                    : std::string("There is no page to go ") + (t == "go_back" ? "back" : "forward") + " to.";
    }
    if (t == "screenshot") return screenshot(b, ctx);
    if (t == "click_at" || t == "hover_at") {
      Status st = t == "click_at" ? b.click(px(a.x), py(a.y), d) : b.mouse("mouseMoved", px(a.x), py(a.y), d);
      if (st) st = b.settle(d);
      if (!st) return st.fail();
      return std::string(t == "click_at" ? "Clicked" : "Hovered") + " at (" + std::to_string(a.x) + ", " +
             std::to_string(a.y) + ").";
    }
    if (t == "type_text_at") return type_text(b, a, d);
    if (t == "select") {
      std::string call = "(" + std::string(kSelectJs) + ")(" + std::to_string(px(a.x)) + "," + std::to_string(py(a.y)) +
                         "," + json_string(a.text) + ")";
      auto r = b.evaluate(call, d);
      if (!r) return r.fail();
      if (*r == "no-select") return fail(Errc::kInvalid, "there is no drop-down list at that point");
      if (*r == "no-option") return fail(Errc::kInvalid, "the drop-down list has no option '" + a.text + "'");
      if (auto st = b.settle(d); !st) return st.fail();
      return "Selected '" + a.text + "'.";
    }
    if (t == "key_combination") return keys(b, a, d);
    if (t == "scroll_document" || t == "scroll_at") {
      const bool vertical = a.direction == "up" || a.direction == "down";
      const int sign = a.direction == "up" || a.direction == "left" ? -1 : 1;
      const double dist = t == "scroll_document" ? (vertical ? b.height() : b.width()) * 0.8
                                                 : grid_to_pixel(a.magnitude, vertical ? b.height() : b.width());
      const double x = t == "scroll_at" ? px(a.x) : b.width() / 2.0, y = t == "scroll_at" ? py(a.y) : b.height() / 2.0;
      if (auto st = b.mouse("mouseWheel", x, y, d, vertical ? 0 : sign * dist, vertical ? sign * dist : 0); !st)
        return st.fail();
      (void)b.evaluate("new Promise(r => requestAnimationFrame(() => r('')))", d);
      return "Scrolled " + a.direction + ".";
    }
    if (t == "drag_and_drop") {
      const double x0 = px(a.x), y0 = py(a.y), x1 = px(a.destination_x), y1 = py(a.destination_y);
      Status st = b.mouse("mouseMoved", x0, y0, d);
      if (st) st = b.mouse("mousePressed", x0, y0, d);
      for (int s = 1; st && s <= 5; ++s) st = b.mouse("mouseMoved", x0 + (x1 - x0) * s / 5, y0 + (y1 - y0) * s / 5, d);
      if (st) st = b.mouse("mouseReleased", x1, y1, d);
      if (st) st = b.settle(d);
      if (!st) return st.fail();
      return "Dragged to (" + std::to_string(a.destination_x) + ", " + std::to_string(a.destination_y) + ").";
    }
    return fail(Errc::kInvalid, "'" + t + "' is not a browser action type");
  }

  Result<std::string> type_text(BrowserSession& b, const BrowserAction& a, Deadline d) {
    if (auto st = b.click(px(a.x), py(a.y), d); !st) return st.fail();
    if (a.clear_before_typing)
      if (auto r = b.evaluate(std::string("String(") + kClearFocusedJs + ")", d); !r) return r.fail();
    if (auto st = b.insert_text(a.text, d); !st) return st.fail();
    if (a.press_enter)
      if (auto st = b.press_key("Enter", 0, d); !st) return st.fail();
    if (auto st = b.settle(d); !st) return st.fail();
    return "Typed " + std::to_string(a.text.size()) + " characters at (" + std::to_string(a.x) + ", " +
           std::to_string(a.y) + ")" + (a.press_enter ? " and pressed Enter." : ".");
  }

  Result<std::string> keys(BrowserSession& b, const BrowserAction& a, Deadline d) {
    int modifiers = 0;
    std::vector<std::string> plain;
    for (const auto& token : a.keys) {
      std::string k = browser_key(token);
      if (k == "Alt")
        modifiers |= 1;
      else if (k == "Control")
        modifiers |= 2;
      else if (k == "Meta")
        modifiers |= 4;
      else if (k == "Shift")
        modifiers |= 8;
      else
        plain.push_back(k);
    }
    if (plain.empty()) plain.push_back(browser_key(a.keys.back()));
    for (const auto& k : plain)
      if (auto st = b.press_key(k, modifiers, d); !st) return st.fail();
    if (auto st = b.settle(d); !st) return st.fail();
    return "Pressed " + join(a.keys, "+") + ".";
  }

  Result<std::string> screenshot(BrowserSession& b, const CallContext& ctx) {
    const Deadline d = ctx.deadline;
    if (screenshots_.load() >= r_.max_screenshots)
      return fail(Errc::kForbidden, "this trial's " + std::to_string(r_.max_screenshots) +
                                        " screenshots are used up; read the page's text instead");
    auto png = b.screenshot(d);
    if (!png) return png.fail();
    const std::size_t bytes = png->size() / 4 * 3;
    if (bytes > limits::kMaxScreenshotBytes)
      return fail(Errc::kInvalid, "the screenshot is " + std::to_string(bytes) + " bytes, over the limit");
    ++screenshots_;
    std::string line = "Screenshot taken (PNG, " + std::to_string(bytes) + " bytes, " + std::to_string(b.width()) +
                       "x" + std::to_string(b.height()) + ")";
    if (!ctx.images) return line + "; this caller takes no images.";
    ctx.images->push_back({"image/png", std::move(*png)});
    return line + ", attached as an image.";
  }

  static std::string json_string(const std::string& s) {
    json::Writer w;
    w.str(s);
    return w.take();
  }

  BrowserRoute r_;
  std::atomic<int> screenshots_{0};
};

}  // namespace

std::shared_ptr<Tool> browser_tool(const BuiltinOptions& o) {
  if (!o.browser.session) return nullptr;
  auto actions = std::make_shared<BrowserActions>(o.browser);
  return std::make_shared<FunctionTool>(
      browser_spec(o.browser.allowed_actions),
      [actions](const json::Value& a, const CallContext& ctx) -> Result<std::string> { return actions->run(a, ctx); });
}

}  // namespace forge::tools
