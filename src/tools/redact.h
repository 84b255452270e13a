// Masks secrets in JSON and log text before anything reaches a log or a trajectory record.
#pragma once

#include <string>
#include <string_view>

#include "core/json.h"

namespace forge::tools {

inline constexpr std::string_view kRedacted = "[REDACTED]";

// True when the lower-cased key contains password, token, secret, api_key, apikey, api-key or
// authorization. ("max_tokens" is sensitive too: the rule is deliberately blunt.)
bool is_sensitive_key(std::string_view key);

// Replaces the value of every sensitive key, at any depth and inside arrays, by "[REDACTED]"
// whatever its type. Allocates nothing (the replacement is a constant string).
void redact_in_place(json::Value& v);

// The same, and also inside string values: a string holding JSON (tool-call arguments are stored
// that way) is redacted structurally, any other string through redact_text().
void redact_in_place(json::Value& v, json::Document::AllocatorType& alloc);

// Valid JSON: redacted as above and returned compact, or unchanged byte for byte when there was
// nothing to mask. Invalid or absurdly deep JSON: redact_text(), the textual pass.
std::string redact_json(std::string_view json_text);

// Best effort for free text, case-insensitive: the value after a sensitive key in `key=value`,
// `key: value`, `"key": "value"` (also `\"key\": \"value\"` and 'single quotes'), a value that is a
// JSON object or array, and the token after `Bearer `. Values on the next line (YAML blocks) and
// `--password value` (no separator) are not recognised.
std::string redact_text(std::string_view text);

}  // namespace forge::tools
