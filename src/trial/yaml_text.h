// Writing the trial's YAML files: JSON values as YAML data, and the one escape that keeps an
// agent's text from breaking a file (control characters and YAML's extra line breaks made visible).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "core/json.h"

namespace forge::trial {

// 15 significant digits: 141.01 reads back as written (yaml-cpp's default 17 prints 141.00999999999999).
inline constexpr std::size_t kYamlDigits = 15;

// JSON → YAML, so tool arguments and states read as data in the YAML files.
void emit_json(YAML::Emitter& e, const json::Value& v);
// The same from text; text that is not JSON is written as a string.
void emit_json_text(YAML::Emitter& e, const std::string& text);

// YAML forbids control characters anywhere in a stream (C0 but tab and newline, DEL, C1), and
// reads NEL, LS and PS (U+0085, U+2028, U+2029) as line breaks; a yaml-cpp literal or plain scalar
// carries them raw: an agent's text could make the file unreadable, replay in a terminal, or
// break out of its block scalar into keys of its own. Each becomes visible text: "\x1b", "\u2028".
std::string visible_controls(const std::string& yaml);

// Text (an agent's message, a tool's output, a file) as a scalar that reads back exactly: a literal
// block when that is exact — it ends in one newline, its first line is neither blank nor indented
// (a block's indentation is guessed from it), it holds no control character or YAML line break —
// else double-quoted, where everything is escaped. Ill-formed UTF-8 becomes U+FFFD first.
void emit_text(YAML::Emitter& e, const std::string& text);
bool reads_back_as_block(std::string_view text);

}  // namespace forge::trial
