// Repairs of tool-call arguments that cannot change their meaning, and the error for the rest.
#include "agent/llm_arguments.h"

#include <vector>

#include "core/json.h"
#include "core/limits.h"
#include "core/strings.h"

namespace forge::agent {

namespace {

bool is_object(std::string_view text) {
  json::Document d;
  return !json::parse_document(d, text) && d.IsObject();
}

// ```json\n{…}\n``` → {…}
std::optional<std::string> strip_fence(const std::string& t) {
  if (!starts_with(t, "```") || t.size() < 6 || !t.ends_with("```")) return std::nullopt;
  std::string inner = t.substr(3, t.size() - 6);
  auto nl = inner.find('\n');
  // The fence's language tag ("json") runs to the first newline; "```{…}```" has none.
  if (nl != std::string::npos && inner.substr(0, nl).find_first_of("{[\"") == std::string::npos) inner.erase(0, nl + 1);
  return trim(inner);
}

// Walks `t` outside string literals of quote `q`, calling f(index) for each structural char.
template <typename F>
void outside_strings(const std::string& t, char q, F&& f) {
  bool in_str = false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (in_str) {
      if (c == '\\') ++i;
      else if (c == q) in_str = false;
    } else if (c == q) {
      in_str = true;
    } else {
      f(i);
    }
  }
}

// {"a": 1,} → {"a": 1}: a comma followed only by white space and a closer is never meaningful.
std::optional<std::string> drop_trailing_commas(const std::string& t) {
  std::vector<std::size_t> drop;
  outside_strings(t, '"', [&](std::size_t i) {
    if (t[i] != ',') return;
    auto next = t.find_first_not_of(" \t\r\n", i + 1);
    if (next != std::string::npos && (t[next] == '}' || t[next] == ']')) drop.push_back(i);
  });
  if (drop.empty()) return std::nullopt;
  std::string out = t;
  for (auto it = drop.rbegin(); it != drop.rend(); ++it) out.erase(*it, 1);
  return out;
}

// {'a': 'b'} → {"a": "b"}, only when no double quote exists: then every ' is a delimiter or the
// parse fails afterwards (an apostrophe inside a value), and the text is kept raw.
std::optional<std::string> single_to_double(const std::string& t) {
  if (t.find('"') != std::string::npos || t.find('\'') == std::string::npos) return std::nullopt;
  std::string out = t;
  for (char& c : out)
    if (c == '\'') c = '"';
  return out;
}

// {"a": {"b": 1} → {"a": {"b": 1}}: exactly one unclosed object, not inside a string.
std::optional<std::string> close_brace(const std::string& t) {
  if (t.empty() || t[0] != '{') return std::nullopt;
  int depth = 0, brackets = 0;
  bool in_str = false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (in_str) {
      if (c == '\\') ++i;
      else if (c == '"') in_str = false;
      continue;
    }
    if (c == '"') in_str = true;
    else if (c == '{') ++depth;
    else if (c == '}') --depth;
    else if (c == '[') ++brackets;
    else if (c == ']') --brackets;
  }
  if (in_str || depth != 1 || brackets != 0) return std::nullopt;
  return t + "}";
}

// "{\"a\": 1}" (an object serialised twice) → {"a": 1}.
std::optional<std::string> unwrap_string(const std::string& t) {
  json::Document d;
  if (json::parse_document(d, t) || !d.IsString()) return std::nullopt;
  std::string inner(d.GetString(), d.GetStringLength());
  return is_object(inner) ? std::optional(inner) : std::nullopt;
}

// "missing a comma or '}' after an object member at offset 14", or "not a JSON object".
std::string why_invalid(std::string_view text) {
  json::Document d;
  auto bad = json::parse_document(d, text);
  if (!bad) return "not a JSON object";
  std::string msg = to_lower(bad->reason);
  if (!msg.empty() && msg.back() == '.') msg.pop_back();
  return msg + " at offset " + std::to_string(bad->offset);
}

std::string compact(const std::string& t) {
  json::Document d;
  (void)json::parse_document(d, t);  // only called on text that parsed
  return json::to_string(d);
}

}  // namespace

RepairedArguments repair_tool_arguments(std::string_view raw) {
  using O = RepairedArguments::Outcome;
  // Past the tool layer's limit nothing is repaired (nor copied twice): the agent loop refuses it.
  if (raw.size() > limits::kMaxToolArgumentsBytes) return {O::kInvalid, std::string(raw), "larger than the limit"};
  if (is_object(raw)) return {O::kValid, std::string(raw), ""};
  std::string t = trim(raw);
  if (t.empty()) return {O::kRepaired, "{}", "empty arguments"};
  if (auto u = unwrap_string(t)) return {O::kRepaired, compact(*u), "arguments encoded twice"};

  std::vector<std::string> notes;
  auto step = [&](std::optional<std::string> next, const char* note) {
    if (!next) return false;
    t = std::move(*next);
    notes.emplace_back(note);
    return is_object(t);
  };
  // Single quotes before commas: the comma scan needs to know where the strings are.
  if (is_object(t) || step(strip_fence(t), "code fence") || step(single_to_double(t), "single quotes") ||
      step(drop_trailing_commas(t), "trailing comma") || step(close_brace(t), "missing final '}'")) {
    return {O::kRepaired, compact(t), notes.empty() ? "white space" : join(notes, ", ")};
  }
  return {O::kInvalid, std::string(raw), why_invalid(raw)};
}

std::string arguments_for_wire(std::string_view arguments) {
  return is_object(arguments) ? std::string(arguments) : std::string("{}");
}

Result<std::string> tool_schema_for_wire(const ToolDecl& tool) {
  if (trim(tool.parameters).empty()) return std::string(R"({"type":"object","properties":{}})");
  if (!is_object(tool.parameters))
    return fail(Errc::kInvalid, "tool '" + tool.name + "': parameters are not a JSON object (" +
                                    why_invalid(tool.parameters) + ")");
  return tool.parameters;
}

bool provider_takes_images(std::string_view provider) { return provider != "vllm" && provider != "ollama"; }

std::string image_note(std::size_t images, std::string_view provider) {
  return "\n[" + std::to_string(images) + (images == 1 ? " image was" : " images were") +
         " returned and not shown: provider '" + std::string(provider) + "' is sent text only]";
}

}  // namespace forge::agent
