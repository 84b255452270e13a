// JSON helpers over RapidJSON.
#include "core/json.h"

#include <algorithm>

namespace forge::json {

Writer& Writer::raw_value(std::string_view json) {
  w_.RawValue(json.data(), json.size(), rapidjson::kObjectType);
  return *this;
}

Writer& Writer::field(std::string_view k, const std::vector<std::string>& v) {
  key(k).begin_array();
  for (const auto& s : v) str(s);
  return end_array();
}

Writer& Writer::field(std::string_view k, const std::map<std::string, std::string>& v) {
  key(k).begin_object();
  for (const auto& [mk, mv] : v) key(mk).str(mv);
  return end_object();
}

Result<Document> parse(std::string_view text, std::string_view what) {
  Document doc;
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError()) {
    std::string excerpt(text.substr(0, 120));
    return fail(Errc::kProtocol, "malformed JSON in " + std::string(what) + " at offset " +
                                     std::to_string(doc.GetErrorOffset()) + ": '" + excerpt + "'");
  }
  return doc;
}

static const Value* member(const Value& obj, const char* key) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

std::string get_string(const Value& obj, const char* key, std::string_view def) {
  const Value* v = member(obj, key);
  return v && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : std::string(def);
}

std::int64_t get_int(const Value& obj, const char* key, std::int64_t def) {
  const Value* v = member(obj, key);
  if (!v) return def;
  if (v->IsInt64()) return v->GetInt64();
  if (v->IsUint64()) return static_cast<std::int64_t>(v->GetUint64());
  if (v->IsDouble()) return static_cast<std::int64_t>(v->GetDouble());
  return def;
}

double get_double(const Value& obj, const char* key, double def) {
  const Value* v = member(obj, key);
  return v && v->IsNumber() ? v->GetDouble() : def;
}

bool get_bool(const Value& obj, const char* key, bool def) {
  const Value* v = member(obj, key);
  return v && v->IsBool() ? v->GetBool() : def;
}

bool has_null(const Value& obj, const char* key) {
  const Value* v = member(obj, key);
  return !v || v->IsNull();
}

std::vector<std::string> get_strings(const Value& obj, const char* key) {
  std::vector<std::string> out;
  const Value* v = member(obj, key);
  if (!v || !v->IsArray()) return out;
  for (const auto& e : v->GetArray())
    if (e.IsString()) out.emplace_back(e.GetString(), e.GetStringLength());
  return out;
}

std::map<std::string, std::string> get_string_map(const Value& obj, const char* key) {
  std::map<std::string, std::string> out;
  const Value* v = member(obj, key);
  if (!v || !v->IsObject()) return out;
  for (const auto& m : v->GetObject())
    if (m.value.IsString()) out[m.name.GetString()] = std::string(m.value.GetString(), m.value.GetStringLength());
  return out;
}

const Value* get_object(const Value& obj, const char* key) {
  const Value* v = member(obj, key);
  return v && v->IsObject() ? v : nullptr;
}

const Value* get_array(const Value& obj, const char* key) {
  const Value* v = member(obj, key);
  return v && v->IsArray() ? v : nullptr;
}

std::string to_string(const Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

static void write_sorted(const Value& v, rapidjson::Writer<rapidjson::StringBuffer>& w) {
  if (v.IsObject()) {
    std::vector<const Value::Member*> members;
    for (const auto& m : v.GetObject()) members.push_back(&m);
    std::sort(members.begin(), members.end(), [](auto* a, auto* b) {
      return std::string_view(a->name.GetString(), a->name.GetStringLength()) <
             std::string_view(b->name.GetString(), b->name.GetStringLength());
    });
    w.StartObject();
    for (auto* m : members) {
      w.Key(m->name.GetString(), m->name.GetStringLength());
      write_sorted(m->value, w);
    }
    w.EndObject();
  } else if (v.IsArray()) {
    w.StartArray();
    for (const auto& e : v.GetArray()) write_sorted(e, w);
    w.EndArray();
  } else {
    v.Accept(w);
  }
}

Result<std::string> canonical(std::string_view text) {
  auto doc = parse(text, "document");
  if (!doc) return doc.fail();
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  write_sorted(*doc, w);
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace forge::json
