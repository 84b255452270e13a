// A JSONPath subset over RapidJSON values, shared by the json-db service and grading.
//
// Supported: `$` (optional: a path may start with a name or `[`), `.name`, `['name']` / `["name"]`,
// `[n]` (negative counts from the end), `.*` / `[*]`, recursive descent `..name` / `..*` /
// `..[…]`, and filters `[?(@.a.b OP literal)]` or `[?(@.a)]` (exists) where OP is one of
// == != < <= > >= and the literal a number, a quoted string, true, false or null. Numbers compare
// numerically, strings byte-wise; bools and null only with == and !=. A missing field never
// matches. Results come in document order.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json.h"
#include "core/result.h"

namespace forge {

// A match and where it sits, so that callers can replace or remove it.
struct JsonPathNode {
  const json::Value* value = nullptr;
  const json::Value* parent = nullptr;  // null for the root
  std::string member;                   // the member name, when parent is an object
  std::size_t index = 0;                // the element index, when parent is an array
};

// The values `path` selects in `root`. A syntax error is kInvalid and names the offset:
// "invalid JSONPath '$.a[' at offset 4: expected an index, '*', a quoted name or '?'".
Result<std::vector<const json::Value*>> jsonpath_query(const json::Value& root, std::string_view path);

// The same, with each match's parent and position.
Result<std::vector<JsonPathNode>> jsonpath_locate(const json::Value& root, std::string_view path);

// Checks the syntax only.
Status jsonpath_validate(std::string_view path);

// For a path ending in a member name (`$.a.b`, `$.a['b']`): the parent path and the name
// ({"$.a", "b"}), so that a caller can create the member. Anything else is kInvalid.
Result<std::pair<std::string, std::string>> jsonpath_split_member(std::string_view path);

}  // namespace forge
