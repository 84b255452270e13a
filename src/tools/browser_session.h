// One trial's browser: Chromium in its own container, driven over a DevTools pipe (cdp_pipe.h).
// The page's primitives (navigate, evaluate, input events, screenshot); the `browser` tool
// (builtin_browser.cc) builds Tolokaforge's actions from them.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "engine/client.h"
#include "tools/cdp_pipe.h"

namespace forge::tools {

struct BrowserLaunch {
  std::string container;  // running, from stack/browser_image.h's image
  std::string user = "65534:65534";
  std::string binary = "/usr/lib/chromium/chromium-headless-shell";
  std::string proxy_server;  // "http://proxy:3128" under limited_internet; empty: none
  std::string proxy_bypass;  // Chromium's ;-separated bypass list
  int width = 1440, height = 900;
};

// The exec's argv: busybox sh wiring the exec's stdin to Chromium's fd 3 and fd 4 to its stdout
// (Chromium's own stdout goes to stderr), a fresh profile under /tmp.
std::vector<std::string> browser_command(const BrowserLaunch& l);

class BrowserSession {
 public:
  static constexpr Millis kNavigationCap{10000};

  // Starts Chromium and attaches to its page; fails with Chromium's stderr when it does not answer.
  static Result<std::unique_ptr<BrowserSession>> start(engine::Client& c, const BrowserLaunch& l, Deadline deadline);

  int width() const { return width_; }
  int height() const { return height_; }
  // One action at a time: the tool holds this for a whole call.
  std::mutex& mutex() { return mu_; }
  std::string diagnostics() const { return pipe_->diagnostics(); }

  // Loads `url` and waits for its load event (at most kNavigationCap, and `deadline`); a network
  // error page is an error naming Chromium's reason (net::ERR_…).
  Status navigate(const std::string& url, Deadline deadline);
  // Back (-1) or forward (+1) in the page's history; false when there is no such entry.
  Result<bool> history(int delta, Deadline deadline);
  // Evaluates `expression`, which must produce a string, and returns it.
  Result<std::string> evaluate(std::string_view expression, Deadline deadline);
  // Input.dispatchMouseEvent: "mouseMoved" | "mousePressed" | "mouseReleased" | "mouseWheel".
  Status mouse(std::string_view type, double x, double y, Deadline deadline, double dx = 0, double dy = 0);
  Status click(double x, double y, Deadline deadline);
  Status insert_text(std::string_view text, Deadline deadline);
  // One key press: `key` a DOM key value ("Enter", "a"), `modifiers` CDP's bit set.
  Status press_key(const std::string& key, int modifiers, Deadline deadline);
  // Base64 PNG of the viewport.
  Result<std::string> screenshot(Deadline deadline);
  // Before an action: forgets the page's earlier events, so settle() sees only what it caused.
  void begin_action() { pipe_->clear_events(); }
  // After an input event: when it started a navigation, waits for the load (kNavigationCap).
  Status settle(Deadline deadline);
  // Whether any page was loaded yet (open_web_browser's initial_url is loaded once).
  bool opened() const { return opened_; }

 private:
  BrowserSession(std::unique_ptr<CdpPipe> p, std::string session, int w, int h)
      : pipe_(std::move(p)), session_(std::move(session)), width_(w), height_(h) {}
  Result<json::Document> call(std::string_view method, std::string_view params, Deadline deadline);
  Status wait_load(Deadline deadline);

  std::mutex mu_;
  std::unique_ptr<CdpPipe> pipe_;
  std::string session_;
  int width_, height_;
  bool opened_ = false;
};

}  // namespace forge::tools
