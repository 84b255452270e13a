// JSON helpers over RapidJSON: the only header that exposes RapidJSON types.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/result.h"

namespace forge::json {

using Value = rapidjson::Value;
using Document = rapidjson::Document;

// A compact JSON writer with helpers for the shapes the Engine API uses.
class Writer {
 public:
  Writer() : w_(buf_) {}
  Writer& begin_object() { w_.StartObject(); return *this; }
  Writer& end_object() { w_.EndObject(); return *this; }
  Writer& begin_array() { w_.StartArray(); return *this; }
  Writer& end_array() { w_.EndArray(); return *this; }
  Writer& key(std::string_view k) { w_.Key(k.data(), static_cast<rapidjson::SizeType>(k.size())); return *this; }
  Writer& str(std::string_view s) { w_.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); return *this; }
  Writer& i64(std::int64_t v) { w_.Int64(v); return *this; }
  Writer& num(double v) { w_.Double(v); return *this; }
  Writer& boolean(bool v) { w_.Bool(v); return *this; }
  Writer& null() { w_.Null(); return *this; }
  Writer& raw_value(std::string_view json);  // an already-serialised value

  Writer& field(std::string_view k, std::string_view v) { return key(k).str(v); }
  Writer& field(std::string_view k, const char* v) { return key(k).str(v); }
  Writer& field(std::string_view k, std::int64_t v) { return key(k).i64(v); }
  Writer& field(std::string_view k, int v) { return key(k).i64(v); }
  Writer& field(std::string_view k, bool v) { return key(k).boolean(v); }
  Writer& field(std::string_view k, const std::vector<std::string>& v);
  Writer& field(std::string_view k, const std::map<std::string, std::string>& v);

  std::string take() { return std::string(buf_.GetString(), buf_.GetSize()); }

 private:
  rapidjson::StringBuffer buf_;
  rapidjson::Writer<rapidjson::StringBuffer> w_;
};

// Parses `text`; `what` names the document in the error ("response to GET /version").
Result<Document> parse(std::string_view text, std::string_view what);

// Lenient getters over an object: a missing key or a different type gives the default.
std::string get_string(const Value& obj, const char* key, std::string_view def = "");
std::int64_t get_int(const Value& obj, const char* key, std::int64_t def = 0);
double get_double(const Value& obj, const char* key, double def = 0);
bool get_bool(const Value& obj, const char* key, bool def = false);
bool has_null(const Value& obj, const char* key);
std::vector<std::string> get_strings(const Value& obj, const char* key);
std::map<std::string, std::string> get_string_map(const Value& obj, const char* key);
const Value* get_object(const Value& obj, const char* key);
const Value* get_array(const Value& obj, const char* key);

std::string to_string(const Value& v);
// The same document with object keys sorted and no white space: for comparing JSON by meaning.
Result<std::string> canonical(std::string_view text);

}  // namespace forge::json
