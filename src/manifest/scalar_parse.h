// Parsers for the scalar forms manifests share: memory sizes, durations, shell words, names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/result.h"

namespace forge::manifest {

// "256m", "1g", "1.5G", "512MiB", "1024" (bytes), like docker compose: units b, k, m, g, t,
// optionally followed by "i" and/or "b", all powers of 1024. nullopt when malformed.
std::optional<std::int64_t> parse_memory(std::string_view text);
// Docker refuses memory limits below 6 MiB; say so at parse time rather than at create.
constexpr std::int64_t kMinMemoryLimit = 6 * 1024 * 1024;

// Go-style durations as compose writes them: "1s", "500ms", "1m30s", "1.5h"; units ns, us, ms,
// s, m, h; "0" alone is zero. A non-zero duration shorter than 1ms rounds up to 1ms, so it is
// never mistaken for "use the default". nullopt when malformed or negative.
std::optional<Millis> parse_duration(std::string_view text);

// Splits a command string into words the way compose does (POSIX shell quoting without
// expansion): single quotes are literal, double quotes honour \" \\ \$ \`, a backslash outside
// quotes escapes the next character. Fails on an unterminated quote or a trailing backslash.
Result<std::vector<std::string>> shell_split(std::string_view text);

// [A-Za-z_][A-Za-z0-9_]*: what may be passed through or set as an environment variable name.
bool is_env_name(std::string_view name);

// [a-z0-9][a-z0-9_.-]*: compose's rule for service (and, here, network) names.
bool is_service_name(std::string_view name);

}  // namespace forge::manifest
