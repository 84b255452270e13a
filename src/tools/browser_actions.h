// The `browser` tool's actions (Tolokaforge's, named after Gemini Computer Use): parsing, the
// 0–999 grid, URL rules and the JSON schema, apart from the browser so they can be unit-tested.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"
#include "core/result.h"
#include "tools/tool.h"

namespace forge::tools {

// The 15 action types, in Tolokaforge's order.
const std::vector<std::string>& browser_action_types();

struct BrowserAction {
  std::string type;
  int x = -1, y = -1, destination_x = -1, destination_y = -1;  // -1: not given
  std::string text, url, query, direction;
  std::vector<std::string> keys;
  bool press_enter = true, clear_before_typing = true;  // Tolokaforge's defaults
  int magnitude = 800;                                  // likewise, on the grid
};

// One item of `actions`, checked for the arguments its type needs ("click_at needs x and y").
Result<BrowserAction> parse_browser_action(const json::Value& item);
// Whether a type changes what the page shows (so the model is shown the page after it).
bool changes_page(const std::string& type);

// A 0–999 grid coordinate to a pixel of a viewport `size` pixels long (Tolokaforge: g/1000*size).
double grid_to_pixel(int g, int size);

// The URL to load for `url`: http(s) only ("mock-web:8080/x" gets http://); anything else
// (file:, chrome:, data:, javascript:, about: …) is kForbidden with a reason the model reads.
Result<std::string> browser_url(const std::string& url);

// Key tokens (Tolokaforge's aliases: CTRL, CMD, ENTER, …) to DOM key values.
std::string browser_key(const std::string& token);

// The tool's declaration: `actions`, an array of action objects whose `type` is one of `allowed`
// (empty: all), strict (additionalProperties false everywhere).
ToolSpec browser_spec(const std::vector<std::string>& allowed);

}  // namespace forge::tools
