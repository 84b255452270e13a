// Tool-call arguments in their one canonical form: parsed once, bounded, no key twice, written
// back compactly. Whatever an actor sent, every consumer (the tool, the grader, the records,
// checks.py) sees that form or, for arguments refused, a bounded excerpt with the reason.
#pragma once

#include <string>
#include <string_view>

namespace forge::tools {

struct ToolArguments {
  // The canonical document (compact JSON re-serialised from the parse, "{}" for blank text) or,
  // when refused, an excerpt of what was sent: its first limits::kMaxRefusedArgumentsExcerpt
  // bytes, valid UTF-8, and a note of the whole size.
  std::string text;
  // Empty when the arguments were accepted; otherwise why not, completing "arguments for 'TOOL'
  // …": "are not valid JSON: missing a comma or '}' after an object member at offset 14", "are
  // refused: the key \"book_id\" twice in the top-level object; send each key once", "are
  // refused: nested 100000 levels deep, deeper than the limit of 64 levels (200002 bytes)".
  std::string refusal;

  bool refused() const { return !refusal.empty(); }
};

// `sent` in canonical form, or refused: larger than limits::kMaxToolArgumentsBytes, not UTF-8,
// not JSON, nested deeper than limits::kMaxModelJsonDepth, or a key twice in some object. Blank
// text means no arguments ("{}"). Idempotent: canonical text comes back unchanged. Never
// recursive, and a refusal never costs more than one pass over the text.
ToolArguments canonical_arguments(std::string_view sent);

// At most limits::kMaxRefusedArgumentsExcerpt bytes of `sent`, cut on a UTF-8 boundary with
// invalid bytes replaced, and "… [N bytes in all]" when cut.
std::string arguments_excerpt(std::string_view sent);

}  // namespace forge::tools
