// The rag service's text handling: a document cut into passages, its title, and a free-text query
// turned into FTS5 terms, so that no character of the agent's query is read as FTS5 syntax.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/limits.h"
#include "core/result.h"

namespace forge::services {

// `text` as passages of at most `max_bytes` each: the whole text when it fits; otherwise
// paragraphs (split at blank lines) packed in order while they fit, a Markdown heading always
// opening a new passage (so a section stays with its heading), and a paragraph longer than
// `max_bytes` cut at its last whitespace before the limit (or at a character boundary). Passages
// hold no blank-only text; a text with nothing but whitespace has none.
std::vector<std::string> split_passages(std::string_view text, std::size_t max_bytes = limits::kMaxRagPassageBytes);

// A document's title: its first Markdown heading among the first lines ("# Refunds" → "Refunds"),
// else its first non-blank line, else `fallback`; at most `max_bytes`, cut at a character boundary.
std::string document_title(std::string_view text, std::string_view fallback,
                           std::size_t max_bytes = limits::kMaxRagTitleBytes);

// The longest prefix of `s` of at most `max_bytes` that ends on a UTF-8 character boundary.
std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes);

// The distinct words of a query, lower-cased, in order: runs of ASCII letters and digits, and of
// non-ASCII bytes (which the index's tokenizer splits further). kInvalid, saying why, when the
// query is longer than kMaxRagQueryBytes, has no word, or more than kMaxRagQueryTerms.
Result<std::vector<std::string>> query_terms(std::string_view query);

// The FTS5 MATCH expression for `terms`: each a quoted string, joined by OR (BM25 ranks documents
// by the terms they hold; none has to hold all of them).
std::string match_expression(const std::vector<std::string>& terms);

}  // namespace forge::services
