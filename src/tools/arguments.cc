// The canonical parse of tool-call arguments.
#include "tools/arguments.h"

#include <cctype>
#include <cstdio>

#include "core/json.h"
#include "core/limits.h"
#include "core/strings.h"

namespace forge::tools {

namespace {

// "missing a comma or '}' after an object member at offset 12"
std::string syntax_error(const json::ParseFailure& bad) {
  std::string msg = bad.reason;
  if (!msg.empty() && msg.back() == '.') msg.pop_back();
  if (!msg.empty()) msg[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(msg[0])));
  return msg + " at offset " + std::to_string(bad.offset);
}

std::string levels(std::size_t n) { return std::to_string(n) + (n == 1 ? " level" : " levels"); }

ToolArguments refuse(std::string_view sent, std::string why) { return {arguments_excerpt(sent), std::move(why)}; }

}  // namespace

std::string arguments_excerpt(std::string_view sent) {
  constexpr std::size_t cap = limits::kMaxRefusedArgumentsExcerpt;
  if (sent.size() <= cap) return valid_utf8(sent);
  std::size_t n = cap;
  // Back off continuation bytes (10xxxxxx), so the cut never splits a character.
  for (int i = 0; i < 3 && n > 0 && (static_cast<unsigned char>(sent[n]) & 0xC0) == 0x80; ++i) --n;
  return valid_utf8(sent.substr(0, n)) + "… [" + std::to_string(sent.size()) + " bytes in all]";
}

ToolArguments canonical_arguments(std::string_view sent) {
  // Some models send "" for a tool without parameters; it means no arguments.
  if (sent.find_first_not_of(" \t\r\n") == std::string_view::npos) return {"{}", ""};
  if (sent.size() > limits::kMaxToolArgumentsBytes)
    return refuse(sent, "are refused: " + std::to_string(sent.size()) + " bytes, more than the limit of " +
                            std::to_string(limits::kMaxToolArgumentsBytes) + " bytes (nested " +
                            levels(json::bracket_depth(sent)) + " deep)");
  if (std::size_t bad = invalid_utf8(sent); bad != std::string_view::npos) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(sent[bad]));
    return refuse(sent, std::string("are not valid UTF-8 (byte ") + hex + " at offset " + std::to_string(bad) +
                            "); send text as UTF-8");
  }
  json::Document doc;
  if (auto bad = json::parse_document(doc, sent, limits::kMaxToolArgumentsBytes, json::kFullPrecision,
                                      limits::kMaxModelJsonDepth)) {
    switch (bad->why) {
      case json::ParseFailure::Why::kTooDeep:
        return refuse(sent, "are refused: nested " + levels(json::bracket_depth(sent)) +
                                " deep, deeper than the limit of " + levels(limits::kMaxModelJsonDepth) + " (" +
                                std::to_string(sent.size()) + " bytes)");
      case json::ParseFailure::Why::kDuplicateKey:
        return refuse(sent, "are refused: " + bad->reason + "; send each key once");
      case json::ParseFailure::Why::kTooLarge:  // checked above
      case json::ParseFailure::Why::kSyntax:
        break;
    }
    return refuse(sent, "are not valid JSON: " + syntax_error(*bad));
  }
  return {json::to_string(doc), ""};
}

}  // namespace forge::tools
