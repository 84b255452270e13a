// Small string helpers: URL and base64 encoding, trimming, joining.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace forge {

std::string url_encode(std::string_view s);
// Standard base64 (RFC 4648 with padding); nullopt on malformed input.
std::optional<std::string> base64_decode(std::string_view s);
std::string base64_encode(std::string_view s);
std::string trim(std::string_view s);
// The offset of the first byte that is not part of well-formed UTF-8 (no overlong forms, no
// surrogates, nothing above U+10FFFF), or npos.
std::size_t invalid_utf8(std::string_view s);
// `s` with each byte that is not part of well-formed UTF-8 replaced by U+FFFD.
std::string valid_utf8(std::string_view s);
std::string to_lower(std::string_view s);
// Escapes & < > " ' and also '/', so no untrusted text (a task id, an error message, a page's
// words) can close a tag or leave a "scheme://" in an HTML page; safe in attribute values too.
std::string html_escape(std::string_view s);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
// The non-empty lines of `text` (split at '\n', a trailing '\r' taken off), views into it.
std::vector<std::string_view> split_lines(std::string_view text);
bool starts_with(std::string_view s, std::string_view prefix);
// Random lower-case hex token of `n` bytes' entropy (from /dev/urandom).
std::string random_hex(std::size_t n);
// "5", "5%", "2.5 %" → the percentage; nullopt for anything else (a sign, an exponent, "inf") and
// outside [0, 100].
std::optional<double> parse_percent(std::string_view text);
// A human-readable byte count: "1.5 MiB".
std::string human_bytes(std::uint64_t n);

}  // namespace forge
