// The browser tool's action parsing, grid, URL rules and schema.
#include "tools/browser_actions.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace forge::tools {

namespace {

bool one_of(const std::string& s, std::initializer_list<const char*> list) {
  return std::any_of(list.begin(), list.end(), [&](const char* v) { return s == v; });
}

int grid_arg(const json::Value& item, const char* key) {
  if (!item.HasMember(key) || !item[key].IsInt64()) return -1;
  return static_cast<int>(std::clamp<std::int64_t>(item[key].GetInt64(), 0, 999));
}

}  // namespace

const std::vector<std::string>& browser_action_types() {
  static const std::vector<std::string> types = {"open_web_browser", "navigate",   "screenshot",   "wait_5_seconds",
                                                 "go_back",          "go_forward", "search",       "click_at",
                                                 "select",           "hover_at",   "type_text_at", "key_combination",
                                                 "scroll_document",  "scroll_at",  "drag_and_drop"};
  return types;
}

bool changes_page(const std::string& type) { return !one_of(type, {"screenshot"}); }

Result<BrowserAction> parse_browser_action(const json::Value& item) {
  if (!item.IsObject()) return fail(Errc::kInvalid, "each action must be an object with a 'type'");
  BrowserAction a;
  a.type = json::get_string(item, "type");
  const auto& types = browser_action_types();
  if (std::find(types.begin(), types.end(), a.type) == types.end())
    return fail(Errc::kInvalid, "'" + a.type + "' is not a browser action type");
  a.x = grid_arg(item, "x");
  a.y = grid_arg(item, "y");
  a.destination_x = grid_arg(item, "destination_x");
  a.destination_y = grid_arg(item, "destination_y");
  a.text = json::get_string(item, "text");
  a.url = json::get_string(item, "url");
  a.query = json::get_string(item, "query");
  a.direction = json::get_string(item, "direction");
  a.keys = json::get_strings(item, "keys");
  a.press_enter = json::get_bool(item, "press_enter", true);
  a.clear_before_typing = json::get_bool(item, "clear_before_typing", true);
  if (item.HasMember("magnitude") && item["magnitude"].IsInt64())
    a.magnitude = static_cast<int>(std::clamp<std::int64_t>(item["magnitude"].GetInt64(), 0, 999));
  const bool point = a.x >= 0 && a.y >= 0;
  if (one_of(a.type, {"click_at", "hover_at", "type_text_at", "select", "scroll_at", "drag_and_drop"}) && !point)
    return fail(Errc::kInvalid, a.type + " needs x and y (0-999 on the viewport's grid)");
  if (a.type == "drag_and_drop" && (a.destination_x < 0 || a.destination_y < 0))
    return fail(Errc::kInvalid, "drag_and_drop needs destination_x and destination_y");
  if (a.type == "navigate" && a.url.empty()) return fail(Errc::kInvalid, "navigate needs a url");
  if (a.type == "search" && a.query.empty()) return fail(Errc::kInvalid, "search needs a query");
  if (one_of(a.type, {"type_text_at", "select"}) && !item.HasMember("text"))
    return fail(Errc::kInvalid, a.type + " needs text");
  if (a.type == "key_combination" && a.keys.empty()) return fail(Errc::kInvalid, "key_combination needs keys");
  if (one_of(a.type, {"scroll_document", "scroll_at"}) && !one_of(a.direction, {"up", "down", "left", "right"}))
    return fail(Errc::kInvalid, a.type + " needs a direction: up, down, left or right");
  return a;
}

double grid_to_pixel(int g, int size) { return static_cast<double>(g) / 1000.0 * size; }

Result<std::string> browser_url(const std::string& raw) {
  std::string url = raw;
  auto scheme_end = url.find("://");
  auto colon = url.find(':');
  // "mock-web:8080/x" and "mock-web/x" have no scheme; "file:/x" and "javascript:x" do.
  bool has_scheme = scheme_end != std::string::npos ||
                    (colon != std::string::npos && colon > 0 &&
                     !std::isdigit(static_cast<unsigned char>(colon + 1 < url.size() ? url[colon + 1] : 'x')));
  if (!has_scheme) url = "http://" + url;
  std::string lower = url;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower.rfind("http://", 0) != 0 && lower.rfind("https://", 0) != 0)
    return fail(Errc::kForbidden, "the browser opens only http:// and https:// pages of the task's services; '" +
                                      raw.substr(0, 200) + "' is refused");
  if (url.size() > 8192) return fail(Errc::kInvalid, "the URL is over 8192 bytes");
  return url;
}

std::string browser_key(const std::string& token) {
  static const std::map<std::string, std::string> aliases = {
      {"CTRL", "Control"},     {"CONTROL", "Control"},     {"ALT", "Alt"},        {"OPTION", "Alt"},
      {"SHIFT", "Shift"},      {"META", "Meta"},           {"CMD", "Meta"},       {"COMMAND", "Meta"},
      {"ENTER", "Enter"},      {"RETURN", "Enter"},        {"TAB", "Tab"},        {"ESCAPE", "Escape"},
      {"ESC", "Escape"},       {"UP", "ArrowUp"},          {"DOWN", "ArrowDown"}, {"LEFT", "ArrowLeft"},
      {"RIGHT", "ArrowRight"}, {"BACKSPACE", "Backspace"}, {"DEL", "Delete"},     {"DELETE", "Delete"},
      {"SPACE", "Space"},      {"SPACEBAR", "Space"},      {"HOME", "Home"},      {"END", "End"},
      {"PAGEUP", "PageUp"},    {"PAGEDOWN", "PageDown"}};
  std::string upper = token;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  auto it = aliases.find(upper);
  if (it != aliases.end()) return it->second;
  if (token.size() == 1) return std::string(1, static_cast<char>(std::tolower(static_cast<unsigned char>(token[0]))));
  return token;
}

ToolSpec browser_spec(const std::vector<std::string>& allowed) {
  const auto& types = allowed.empty() ? browser_action_types() : allowed;
  json::Writer w;
  w.begin_object().field("type", "object").key("properties").begin_object();
  w.key("actions").begin_object().field("type", "array").field("minItems", 1).field("maxItems", 20);
  w.field("description", "Sequence of browser actions to perform, in order (Gemini Computer Use actions)");
  w.key("items").begin_object().field("type", "object").key("properties").begin_object();
  w.key("type").begin_object().field("type", "string").field("enum", types).end_object();
  auto str = [&](const char* k, const char* d) {
    w.key(k).begin_object().field("type", "string").field("description", d).end_object();
  };
  auto grid = [&](const char* k, const char* d) {
    w.key(k).begin_object().field("type", "integer").field("minimum", 0).field("maximum", 999);
    w.field("description", d).end_object();
  };
  str("url", "URL for navigate");
  str("query", "Search query for search");
  grid("x", "X coordinate on the viewport's 0-999 grid (1440 px wide)");
  grid("y", "Y coordinate on the viewport's 0-999 grid (900 px high)");
  grid("destination_x", "Destination X coordinate for drag_and_drop");
  grid("destination_y", "Destination Y coordinate for drag_and_drop");
  str("text", "Text to type for type_text_at, or the option's label for select");
  w.key("press_enter").begin_object().field("type", "boolean");
  w.field("description", "Whether to press Enter after typing (default: true)").end_object();
  w.key("clear_before_typing").begin_object().field("type", "boolean");
  w.field("description", "Whether to clear the field before typing (default: true)").end_object();
  w.key("keys").begin_object().field("type", "array").key("items").begin_object().field("type", "string").end_object();
  w.field("maxItems", 8)
      .field("description", "Key tokens pressed together, e.g. ['CTRL', 'A'] or ['ENTER']")
      .end_object();
  w.key("direction").begin_object().field("type", "string");
  w.field("enum", std::vector<std::string>{"up", "down", "left", "right"})
      .field("description", "Scroll direction")
      .end_object();
  w.key("magnitude").begin_object().field("type", "integer").field("minimum", 0).field("maximum", 999);
  w.field("description", "Scroll distance on the grid (default: 800)").end_object();
  w.end_object().key("required").begin_array().str("type").end_array().field("additionalProperties", false);
  w.end_object().end_object();
  w.end_object().key("required").begin_array().str("actions").end_array().field("additionalProperties", false);
  return {"browser",
          "Control a headless browser with coordinate-based actions on a 1000x1000 grid over the 1440x900 viewport. "
          "After actions that change the page you get its title, URL, visible text and its clickable and editable "
          "elements with grid coordinates; screenshot returns an image of the viewport.",
          w.end_object().take()};
}

}  // namespace forge::tools
