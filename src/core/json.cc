// JSON helpers over RapidJSON.
#include "core/json.h"

#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace forge::json {

Writer& Writer::num(double v) {
  if (std::isfinite(v))
    w_.Double(v);
  else
    w_.Null();
  return *this;
}

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

namespace {

// Forwards the parser's events to a Document, stopping (parse error "terminated") at the first
// array or object deeper than the limit, so the depth is known before anything is built.
struct DepthLimited {
  Document& doc;
  int max_depth;
  int depth = 0;
  bool too_deep = false;

  bool Null() { return doc.Null(); }
  bool Bool(bool b) { return doc.Bool(b); }
  bool Int(int i) { return doc.Int(i); }
  bool Uint(unsigned u) { return doc.Uint(u); }
  bool Int64(std::int64_t i) { return doc.Int64(i); }
  bool Uint64(std::uint64_t u) { return doc.Uint64(u); }
  bool Double(double d) { return doc.Double(d); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) { return doc.RawNumber(s, n, copy); }
  bool String(const char* s, rapidjson::SizeType n, bool copy) { return doc.String(s, n, copy); }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) { return doc.Key(s, n, copy); }
  bool StartObject() { return enter() && doc.StartObject(); }
  bool EndObject(rapidjson::SizeType n) {
    --depth;
    return doc.EndObject(n);
  }
  bool StartArray() { return enter() && doc.StartArray(); }
  bool EndArray(rapidjson::SizeType n) {
    --depth;
    return doc.EndArray(n);
  }

  bool enter() {
    if (++depth <= max_depth) return true;
    too_deep = true;
    return false;
  }
};

std::string_view name_of(const Value::Member& m) { return {m.name.GetString(), m.name.GetStringLength()}; }

// A JSON Pointer segment (RFC 6901: ~ and / escaped), cut short for a message.
std::string pointer_segment(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 80)) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return s.size() > 80 ? out + "…" : out;
}

// The first object (depth first) holding a key twice, as the failure naming the key and the
// object's JSON Pointer. Iterative: the stack of open containers is the path.
std::optional<ParseFailure> duplicate_key(const Value& root) {
  struct Frame {
    const Value* v;
    rapidjson::SizeType next;
  };
  std::vector<Frame> stack;
  std::vector<std::string_view> names;
  auto twice = [&](const Value& obj) -> std::optional<std::string_view> {
    if (obj.MemberCount() < 2) return std::nullopt;
    names.clear();
    for (const auto& m : obj.GetObject()) names.push_back(name_of(m));
    std::sort(names.begin(), names.end());
    auto it = std::adjacent_find(names.begin(), names.end());
    return it == names.end() ? std::nullopt : std::optional(*it);
  };
  auto enter = [&](const Value* v) -> std::optional<ParseFailure> {
    if (!v->IsObject() && !v->IsArray()) return std::nullopt;
    if (v->IsObject())
      if (auto key = twice(*v)) {
        std::string where;
        for (const auto& f : stack)
          where += "/" + (f.v->IsObject() ? pointer_segment(name_of(*(f.v->MemberBegin() + (f.next - 1))))
                                          : std::to_string(f.next - 1));
        std::string shown(key->substr(0, 80));
        return ParseFailure{ParseFailure::Why::kDuplicateKey,
                            "the key \"" + shown + (key->size() > 80 ? "…" : "") + "\" twice in the " +
                                (where.empty() ? std::string("top-level object") : "object at " + where),
                            0};
      }
    stack.push_back({v, 0});
    return std::nullopt;
  };
  if (auto bad = enter(&root)) return bad;
  while (!stack.empty()) {
    Frame& f = stack.back();
    const rapidjson::SizeType n = f.v->IsObject() ? f.v->MemberCount() : f.v->Size();
    if (f.next == n) {
      stack.pop_back();
      continue;
    }
    const Value* child = f.v->IsObject() ? &(f.v->MemberBegin() + f.next)->value : &(*f.v)[f.next];
    ++f.next;
    if (auto bad = enter(child)) return bad;
  }
  return std::nullopt;
}

template <unsigned Flags>
std::optional<ParseFailure> parse_with(Document& doc, std::string_view text, int max_depth) {
  rapidjson::MemoryStream ms(text.data(), text.size());
  rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> is(ms);  // skips a BOM, as Parse does
  rapidjson::Reader reader;
  std::optional<ParseFailure> failure;
  auto generate = [&](Document& d) {
    DepthLimited guard{d, max_depth};
    // The iterative parser keeps its own stack on the heap: no input can exhaust the C stack.
    auto ok = reader.Parse<Flags | rapidjson::kParseIterativeFlag>(is, guard);
    if (ok) return true;
    if (guard.too_deep)
      failure = ParseFailure{ParseFailure::Why::kTooDeep,
                             "nesting deeper than " + std::to_string(max_depth) + " levels", ok.Offset()};
    else
      failure = ParseFailure{ParseFailure::Why::kSyntax, rapidjson::GetParseError_En(ok.Code()), ok.Offset()};
    return false;
  };
  doc.SetNull();
  doc.Populate(generate);
  if (!failure) failure = duplicate_key(doc);
  if (failure) doc.SetNull();
  return failure;
}

}  // namespace

std::optional<ParseFailure> parse_document(Document& doc, std::string_view text, std::size_t max_bytes,
                                           unsigned options, int max_depth) {
  if (text.size() > max_bytes) {
    doc.SetNull();
    return ParseFailure{
        ParseFailure::Why::kTooLarge,
        "larger than the limit of " + std::to_string(max_bytes) + " bytes (" + std::to_string(text.size()) + " bytes)",
        max_bytes};
  }
  constexpr unsigned kFull = rapidjson::kParseFullPrecisionFlag, kUtf8 = rapidjson::kParseValidateEncodingFlag;
  const bool full = options & kFullPrecision, utf8 = options & kValidateUtf8;
  if (full && utf8) return parse_with<kFull | kUtf8>(doc, text, max_depth);
  if (full) return parse_with<kFull>(doc, text, max_depth);
  if (utf8) return parse_with<kUtf8>(doc, text, max_depth);
  return parse_with<0>(doc, text, max_depth);
}

Result<Document> parse(std::string_view text, std::string_view what, std::size_t max_bytes, unsigned options) {
  Document doc;
  if (auto bad = parse_document(doc, text, max_bytes, options)) {
    if (bad->why == ParseFailure::Why::kTooLarge)
      return fail(Errc::kProtocol, std::string(what) + " is " + bad->reason);
    if (bad->why == ParseFailure::Why::kTooDeep)
      return fail(Errc::kProtocol,
                  std::string(what) + " has " + bad->reason + " (at offset " + std::to_string(bad->offset) + ")");
    if (bad->why == ParseFailure::Why::kDuplicateKey)
      return fail(Errc::kProtocol, std::string(what) + " has " + bad->reason);
    std::string excerpt(text.substr(0, 120));
    return fail(Errc::kProtocol, "malformed JSON in " + std::string(what) + " at offset " +
                                     std::to_string(bad->offset) + " (" + bad->reason + "): '" + excerpt + "'");
  }
  return doc;
}

bool nested_deeper_than(const Value& v, int limit) {
  std::vector<std::pair<const Value*, int>> stack{{&v, 1}};
  while (!stack.empty()) {
    auto [cur, depth] = stack.back();
    stack.pop_back();
    if (!cur->IsObject() && !cur->IsArray()) continue;
    if (depth > limit) return true;
    if (cur->IsObject())
      for (const auto& m : cur->GetObject()) stack.emplace_back(&m.value, depth + 1);
    else
      for (const auto& e : cur->GetArray()) stack.emplace_back(&e, depth + 1);
  }
  return false;
}

std::size_t bracket_depth(std::string_view text) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

void copy_into(Document& dst, const Value& src) {
  auto generate = [&](Document& d) { return emit(src, d); };
  dst.Populate(generate);
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
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max(), kMin = std::numeric_limits<std::int64_t>::min();
  if (v->IsInt64()) return v->GetInt64();
  if (v->IsUint64()) return kMax;  // above int64's range: saturated, never wrapped negative
  if (v->IsDouble()) {
    // A double outside int64's range has no conversion (undefined behaviour): saturate instead.
    const double d = v->GetDouble();
    if (std::isnan(d)) return def;
    if (d >= 9.2233720368547758e18) return kMax;
    if (d <= -9.2233720368547758e18) return kMin;
    return static_cast<std::int64_t>(d);
  }
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
  emit(v, w);
  return std::string(buf.GetString(), buf.GetSize());
}

std::string to_pretty_string(const Value& v) {
  // Deeper than any parse allows (a value only composition builds), the indentation alone would
  // grow with the square of the depth: such a value is written compact.
  if (nested_deeper_than(v, limits::kMaxJsonDepth)) return to_string(v);
  rapidjson::StringBuffer buf;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
  w.SetIndent(' ', 2);
  emit(v, w);
  return std::string(buf.GetString(), buf.GetSize());
}

Result<std::string> canonical(std::string_view text) {
  auto doc = parse(text, "document");
  if (!doc) return doc.fail();
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  emit_sorted(*doc, w);
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace forge::json
