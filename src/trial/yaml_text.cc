// JSON as YAML data, and visible control characters.
#include "trial/yaml_text.h"

#include "core/limits.h"
#include "core/strings.h"

namespace forge::trial {

namespace {

// json::emit's events as YAML: iterative, so the C stack never grows with the document.
struct YamlEvents {
  YAML::Emitter& e;
  bool Null() { return put(YAML::Null); }
  bool Bool(bool b) { return put(b); }
  bool Int(int i) { return put(i); }
  bool Uint(unsigned u) { return put(u); }
  bool Int64(std::int64_t i) { return put(i); }
  bool Uint64(std::uint64_t u) { return put(u); }
  bool Double(double d) { return put(d); }
  bool String(const char* s, rapidjson::SizeType n, bool) { return put(std::string(s, n)); }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    e << YAML::Key << std::string(s, n) << YAML::Value;
    return e.good();
  }
  bool StartObject() { return put(YAML::BeginMap); }
  bool EndObject(rapidjson::SizeType) { return put(YAML::EndMap); }
  bool StartArray() { return put(YAML::BeginSeq); }
  bool EndArray(rapidjson::SizeType) { return put(YAML::EndSeq); }
  template <typename T>
  bool put(const T& v) {
    e << v;
    return e.good();
  }
};

}  // namespace

void emit_json(YAML::Emitter& e, const json::Value& v) {
  // Past what any parse allows (a value built by composing others), the YAML would indent each
  // level further, growing with the square of the depth: such a value is written as its JSON text.
  if (json::nested_deeper_than(v, limits::kMaxJsonDepth)) {
    e << json::to_string(v);
    return;
  }
  YamlEvents out{e};
  json::emit(v, out);
}

void emit_json_text(YAML::Emitter& e, const std::string& text) {
  json::Document d;
  if (json::parse_document(d, text))
    e << text;
  else emit_json(e, d);
}

// Each forbidden character as visible text (the header says why).
std::string visible_controls(const std::string& yaml) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(yaml.size());
  for (std::size_t i = 0; i < yaml.size(); ++i) {
    const auto c = static_cast<unsigned char>(yaml[i]);
    if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else if (c == 0xc2 && i + 1 < yaml.size() && static_cast<unsigned char>(yaml[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(yaml[i + 1]) <= 0x9f) {
      const auto d = static_cast<unsigned char>(yaml[++i]);
      out += "\\u00";
      out += kHex[d >> 4];
      out += kHex[d & 15];
    } else if (c == 0xe2 && i + 2 < yaml.size() && static_cast<unsigned char>(yaml[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(yaml[i + 2]) == 0xa8 || static_cast<unsigned char>(yaml[i + 2]) == 0xa9)) {
      out += static_cast<unsigned char>(yaml[i + 2]) == 0xa8 ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += yaml[i];
    }
  }
  return out;
}

bool reads_back_as_block(std::string_view t) {
  if (t.size() < 2 || t.back() != '\n' || t[t.size() - 2] == '\n') return false;  // clip keeps one newline
  if (t.front() == ' ' || t.front() == '\t' || t.front() == '\n') return false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const auto c = static_cast<unsigned char>(t[i]);
    if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) return false;
    if (c == 0xc2 && i + 1 < t.size() && static_cast<unsigned char>(t[i + 1]) <= 0x9f) return false;  // C1, NEL
    if (c == 0xe2 && i + 2 < t.size() && static_cast<unsigned char>(t[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(t[i + 2]) | 1) == 0xa9)
      return false;  // LS, PS
    if (c == 0xef && i + 2 < t.size() && static_cast<unsigned char>(t[i + 1]) == 0xbb &&
        static_cast<unsigned char>(t[i + 2]) == 0xbf)
      return false;  // a BOM inside a block is dropped by some readers
  }
  return true;
}

void emit_text(YAML::Emitter& e, const std::string& text) {
  std::string t = valid_utf8(text);
  e << (reads_back_as_block(t) ? YAML::Literal : YAML::DoubleQuoted) << t;
}

}  // namespace forge::trial
