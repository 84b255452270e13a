// JSON helpers over RapidJSON: the only header that exposes RapidJSON types.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/limits.h"
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
  // A number that is not finite has no JSON form: it is written as null, so no caller can leave
  // a document without its value (RapidJSON writes nothing for inf or NaN).
  Writer& num(double v);
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

// Extra RapidJSON parse options, combinable with |.
enum ParseOption : unsigned {
  kFullPrecision = 1,  // doubles exactly as written (kParseFullPrecisionFlag)
  kValidateUtf8 = 2,   // refuse invalid UTF-8 (kParseValidateEncodingFlag)
};

// Why a parse failed: RapidJSON's message or the limit that was hit, and the byte offset.
struct ParseFailure {
  enum class Why { kSyntax, kTooDeep, kTooLarge, kDuplicateKey };
  Why why = Why::kSyntax;
  // "Missing a comma or ']' after an array element.", "nesting deeper than 128 levels",
  // "the key \"id\" twice in the object at /items/0"
  std::string reason;
  std::size_t offset = 0;  // kDuplicateKey: 0 (the reason names where)
};

// Every parse of JSON goes through here. RapidJSON's iterative parser (no recursion, whatever
// the input), nesting refused beyond `max_depth` as soon as it is reached (a 1 MiB "[[[[…"
// stops after 129 bytes), and text longer than `max_bytes` refused before parsing. An object
// holding a key twice is refused too: readers disagree about which value counts (RapidJSON's
// FindMember takes the first, Python's json the last), so no document means two things to two
// readers. On failure `doc` is left null.
std::optional<ParseFailure> parse_document(Document& doc, std::string_view text,
                                           std::size_t max_bytes = limits::kMaxJsonBytes, unsigned options = 0,
                                           int max_depth = limits::kMaxJsonDepth);

// parse_document as a Result; `what` names the document in the error ("response to GET /version").
// kProtocol: "malformed JSON in WHAT at offset N (REASON): 'excerpt'", "WHAT has nesting deeper
// than 128 levels (at offset N)", "WHAT is larger than the limit of N bytes (M bytes)", "WHAT has
// the key "id" twice in the object at /items/0".
Result<Document> parse(std::string_view text, std::string_view what, std::size_t max_bytes = limits::kMaxJsonBytes,
                       unsigned options = 0);

// True when `v` has more than `limit` levels of arrays and objects. Iterative, so safe on any value.
bool nested_deeper_than(const Value& v, int limit = limits::kMaxJsonDepth);

// How deep the arrays and objects of `text` nest, counted over its brackets outside strings,
// whether or not it parses: one pass, no recursion, for saying how deep refused text was.
std::size_t bracket_depth(std::string_view text);

// Sends `v` to a RapidJSON SAX handler (a Writer, a Document, a SchemaValidator) as Value::Accept
// does, but with an explicit stack instead of recursion: values built by composing parsed ones
// (json-db patches) can be deeper than any parse allows, and no depth may exhaust the C stack.
// Returns false when the handler stops.
template <typename Handler>
bool emit(const Value& root, Handler& h) {
  struct Frame {
    const Value* v;
    rapidjson::SizeType next;
  };
  std::vector<Frame> stack;
  const Value* cur = &root;
  for (;;) {
    if (cur) {
      bool ok = true;
      switch (cur->GetType()) {
        case rapidjson::kNullType:
          ok = h.Null();
          break;
        case rapidjson::kFalseType:
          ok = h.Bool(false);
          break;
        case rapidjson::kTrueType:
          ok = h.Bool(true);
          break;
        case rapidjson::kStringType:
          ok = h.String(cur->GetString(), cur->GetStringLength(), true);
          break;
        case rapidjson::kNumberType:
          if (cur->IsDouble())
            ok = h.Double(cur->GetDouble());
          else if (cur->IsInt())
            ok = h.Int(cur->GetInt());
          else if (cur->IsUint())
            ok = h.Uint(cur->GetUint());
          else if (cur->IsInt64())
            ok = h.Int64(cur->GetInt64());
          else
            ok = h.Uint64(cur->GetUint64());
          break;
        case rapidjson::kObjectType:
          ok = h.StartObject();
          stack.push_back({cur, 0});
          break;
        case rapidjson::kArrayType:
          ok = h.StartArray();
          stack.push_back({cur, 0});
          break;
      }
      if (!ok) return false;
      cur = nullptr;
    }
    if (stack.empty()) return true;
    Frame& f = stack.back();
    if (f.v->IsObject()) {
      if (f.next < f.v->MemberCount()) {
        const auto& m = *(f.v->MemberBegin() + f.next++);
        if (!h.Key(m.name.GetString(), m.name.GetStringLength(), true)) return false;
        cur = &m.value;
      } else {
        const rapidjson::SizeType n = f.v->MemberCount();
        stack.pop_back();
        if (!h.EndObject(n)) return false;
      }
    } else if (f.next < f.v->Size()) {
      cur = &(*f.v)[f.next++];
    } else {
      const rapidjson::SizeType n = f.v->Size();
      stack.pop_back();
      if (!h.EndArray(n)) return false;
    }
  }
}

// `src` deep-copied into `dst` (replacing its value) through emit: CopyFrom recurses. `src` must
// not lie inside `dst`.
void copy_into(Document& dst, const Value& src);

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

// `v` as compact JSON. Iterative (emit), so any depth is safe.
std::string to_string(const Value& v);
// `v` indented by two spaces per level, for people to read. Iterative (emit) too; a value nested
// deeper than limits::kMaxJsonDepth comes back compact (its indentation would grow quadratically).
std::string to_pretty_string(const Value& v);
// Like emit, with each object's members in byte order of their names (stable for duplicates).
template <typename Handler>
bool emit_sorted(const Value& root, Handler& h) {
  struct Frame {
    const Value* v;
    std::vector<const Value::Member*> members;  // objects: sorted
    rapidjson::SizeType next = 0;
  };
  std::vector<Frame> stack;
  const Value* cur = &root;
  for (;;) {
    if (cur) {
      if (cur->IsObject()) {
        if (!h.StartObject()) return false;
        Frame f{cur, {}, 0};
        for (const auto& m : cur->GetObject()) f.members.push_back(&m);
        std::stable_sort(f.members.begin(), f.members.end(), [](const Value::Member* a, const Value::Member* b) {
          return std::string_view(a->name.GetString(), a->name.GetStringLength()) <
                 std::string_view(b->name.GetString(), b->name.GetStringLength());
        });
        stack.push_back(std::move(f));
      } else if (cur->IsArray()) {
        if (!h.StartArray()) return false;
        stack.push_back({cur, {}, 0});
      } else if (!emit(*cur, h)) {  // a scalar: no recursion
        return false;
      }
      cur = nullptr;
    }
    if (stack.empty()) return true;
    Frame& f = stack.back();
    if (f.v->IsObject()) {
      if (f.next < f.members.size()) {
        const Value::Member* m = f.members[f.next++];
        if (!h.Key(m->name.GetString(), m->name.GetStringLength(), true)) return false;
        cur = &m->value;
      } else {
        const auto n = static_cast<rapidjson::SizeType>(f.members.size());
        stack.pop_back();
        if (!h.EndObject(n)) return false;
      }
    } else if (f.next < f.v->Size()) {
      cur = &(*f.v)[f.next++];
    } else {
      const rapidjson::SizeType n = f.v->Size();
      stack.pop_back();
      if (!h.EndArray(n)) return false;
    }
  }
}
// The same document with object keys sorted and no white space: for comparing JSON by meaning.
Result<std::string> canonical(std::string_view text);

}  // namespace forge::json
