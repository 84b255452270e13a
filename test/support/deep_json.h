// JSON nested past every limit, for the tests of what walks it: text a model could send, and a
// value only composition (never a parse) can build.
#pragma once

#include <cstddef>
#include <string>

#include "core/json.h"

namespace forge::test {

// "[[…]]", `levels` deep.
inline std::string nested_text(std::size_t levels) { return std::string(levels, '[') + std::string(levels, ']'); }

// Tool arguments whose one property is an array `levels` deep ({"path": [[…]]}: levels + 1 in all).
inline std::string nested_array_arguments(std::size_t levels, const std::string& key = "path") {
  return "{\"" + key + "\":" + nested_text(levels) + "}";
}

// {"a":{"a":…1…}}, `levels` objects deep.
inline std::string nested_objects(std::size_t levels) {
  std::string out;
  out.reserve(levels * 6 + 1);
  for (std::size_t i = 0; i < levels; ++i) out += R"({"a":)";
  out += "1";
  out.append(levels, '}');
  return out;
}

// An array `levels` deep built by composition (json-db patches can build one): no parse allows it.
// Its innermost array holds `leaf` when given.
inline void build_deep(json::Document& d, std::size_t levels, const char* leaf = nullptr) {
  d.SetArray();
  json::Value* cur = &d;
  for (std::size_t i = 1; i < levels; ++i) {
    cur->PushBack(json::Value(rapidjson::kArrayType), d.GetAllocator());
    cur = &(*cur)[0];
  }
  if (leaf) cur->PushBack(json::Value(rapidjson::StringRef(leaf)), d.GetAllocator());
}

}  // namespace forge::test
