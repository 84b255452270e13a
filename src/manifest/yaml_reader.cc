// Strict reading of yaml-cpp nodes: typed getters that record diagnostics instead of throwing.
#include "manifest/yaml_reader.h"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "core/limits.h"
#include "core/strings.h"

namespace forge::manifest {

namespace {

constexpr int kMaxMergeDepth = limits::kMaxYamlMergeDepth;

// Thrown by LimitScan to stop the parser at the node that crossed a limit.
struct LimitHit {
  YAML::Mark mark;
  std::string message;
};

// A pass over the parser's events before the document is built, measuring what a walk of it
// would see with every alias expanded: nodes, nesting and aliases. yaml-cpp shares an aliased
// node instead of copying it, so building is cheap, but converting or walking the result visits
// each alias's whole subtree again: nine levels of ten aliases (a "billion laughs") is 10^9 nodes.
// Each anchor's expanded size and height are recorded when its node ends, so the pass is linear.
class LimitScan : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string&) override {
    leaf(mark, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (++aliases_ > limits::kMaxYamlAliases)
      throw LimitHit{mark, "more than " + std::to_string(limits::kMaxYamlAliases) + " aliases (*name) in one file"};
    const Subtree t = anchor < anchors_.size() ? anchors_[anchor] : Subtree{1, 0};
    add(t.nodes, mark);
    child(t.height, mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Subtree {
    std::size_t nodes;
    int height;  // levels of mappings and lists: 0 for a scalar
  };
  struct Open {
    YAML::anchor_t anchor;
    std::size_t nodes_before;
    int tallest_child = 0;
    YAML::Mark mark;
  };

  void add(std::size_t n, const YAML::Mark& mark) {
    nodes_ = n > limits::kMaxYamlExpandedNodes ? n : nodes_ + n;
    if (nodes_ > limits::kMaxYamlExpandedNodes)
      throw LimitHit{mark, "the document expands to more than " + std::to_string(limits::kMaxYamlExpandedNodes) +
                               " nodes through its aliases (an alias bomb?)"};
  }
  void child(int height, const YAML::Mark& mark) {
    if (static_cast<std::size_t>(height) + open_.size() > static_cast<std::size_t>(limits::kMaxYamlDepth))
      throw LimitHit{mark, "mappings and lists nest deeper than " + std::to_string(limits::kMaxYamlDepth) +
                               " levels (aliases expanded)"};
    if (!open_.empty()) open_.back().tallest_child = std::max(open_.back().tallest_child, height);
  }
  void remember(YAML::anchor_t anchor, Subtree t) {
    if (anchor == YAML::NullAnchor) return;
    if (anchors_.size() <= anchor) anchors_.resize(anchor + 1, Subtree{1, 0});
    anchors_[anchor] = t;
  }
  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
    add(1, mark);
    child(0, mark);
    remember(anchor, {1, 0});
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    const std::size_t before = nodes_;
    add(1, mark);
    child(1, mark);
    open_.push_back({anchor, before, 0, mark});
  }
  void close() {
    if (open_.empty()) return;
    Open o = open_.back();
    open_.pop_back();
    const int height = o.tallest_child + 1;
    remember(o.anchor, {nodes_ - o.nodes_before, height});
    if (!open_.empty()) open_.back().tallest_child = std::max(open_.back().tallest_child, height);
  }

  std::size_t nodes_ = 0, aliases_ = 0;
  std::vector<Open> open_;
  std::vector<Subtree> anchors_;
};

std::string kind_of(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  std::string s = n.Scalar();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return "'" + s + "'";
}

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// "${HTTP_PROXY:-}" or "$HOME": the variable reference starting at s[i] ('$'), for messages.
std::string reference_at(const std::string& s, std::size_t i) {
  std::size_t end = i + 1;
  if (end < s.size() && s[end] == '{') {
    end = s.find('}', end);
    end = end == std::string::npos ? s.size() : end + 1;
  } else {
    while (end < s.size() && is_name_char(s[end])) ++end;
  }
  std::string ref = s.substr(i, end - i);
  return ref.size() > 40 ? ref.substr(0, 37) + "..." : ref;
}

Field entry_field(const YAML::Node& key, const YAML::Node& value) {
  Field f{key.IsScalar() ? key.Scalar() : std::string("?"), value, key.Mark(), value.Mark()};
  if (f.is_null() || f.mark.is_null()) f.mark = f.key_mark;
  return f;
}

}  // namespace

std::string subject(std::string_view what, std::string_view key) {
  if (key.empty()) return what.empty() ? std::string("the document") : std::string(what);
  std::string s;
  if (!what.empty()) s.append(what).append(": ");
  return s.append("'").append(key).append("'");
}

std::string prefix(std::string_view what) { return what.empty() ? std::string() : std::string(what) + ": "; }

std::optional<Field> YamlReader::parse(std::string_view text) {
  if (text.size() > limits::kMaxYamlBytes) {
    diags_.add(Diagnostic{file_, 1, 1,
                          "the file is larger than the " + human_bytes(limits::kMaxYamlBytes) + " limit for YAML (" +
                              std::to_string(text.size()) + " bytes)",
                          "keep data in a json_db file"});
    return std::nullopt;
  }
  try {
    {
      std::istringstream in{std::string(text)};
      YAML::Parser scan(in);
      LimitScan limits;
      scan.HandleNextDocument(limits);
    }
    YAML::Node root = YAML::Load(std::string(text));
    return Field{"", root, root.Mark(), root.Mark()};
  } catch (const LimitHit& e) {
    diags_.add(Diagnostic{file_, e.mark.line + 1, e.mark.column + 1, e.message, {}});
  } catch (const YAML::ParserException& e) {
    diags_.add(Diagnostic{file_, e.mark.line + 1, e.mark.column + 1, "YAML syntax error: " + e.msg, {}});
  } catch (const YAML::Exception& e) {
    diags_.add(Diagnostic{file_,
                          e.mark.is_null() ? 0 : e.mark.line + 1,
                          e.mark.is_null() ? 0 : e.mark.column + 1,
                          "cannot read YAML: " + e.msg,
                          {}});
  }
  return std::nullopt;
}

SourceLocation YamlReader::location(const Field& f, At at) const {
  const YAML::Mark& m = at == At::kKey ? f.key_mark : f.mark;
  if (m.is_null()) return SourceLocation{file_, 0, 0};
  return SourceLocation{file_, m.line + 1, m.column + 1};
}

void YamlReader::error(const Field& f, std::string message, std::string hint, At at) {
  SourceLocation loc = location(f, at);
  diags_.add(Diagnostic{loc.file, loc.line, loc.column, std::move(message), std::move(hint)});
}

void YamlReader::warning(const Field& f, std::string message, std::string hint, At at) {
  SourceLocation loc = location(f, at);
  diags_.add(Diagnostic{loc.file, loc.line, loc.column, std::move(message), std::move(hint), Severity::kWarning});
}

void YamlReader::merge_into(const YAML::Node& merged, std::vector<Field>& out, int depth) {
  auto has = [&](const std::string& key) {
    return std::any_of(out.begin(), out.end(), [&](const Field& f) { return f.key == key; });
  };
  if (merged.IsSequence()) {
    // Earlier mappings in a merge list win over later ones.
    for (const auto& item : merged) merge_into(item, out, depth);
    return;
  }
  if (!merged.IsMap() || depth > kMaxMergeDepth) return;
  std::vector<YAML::Node> nested;
  for (const auto& kv : merged) {
    if (kv.first.IsScalar() && kv.first.Scalar() == "<<") {
      nested.push_back(kv.second);
    } else if (Field f = entry_field(kv.first, kv.second); !has(f.key)) {
      out.push_back(std::move(f));
    }
  }
  for (const auto& n : nested) merge_into(n, out, depth + 1);
}

std::vector<Field> YamlReader::mapping(const Field& f, std::string_view what) {
  std::vector<Field> out;
  if (!f.node.IsMap()) {
    error(f, subject(what, f.key) + " must be a mapping, got " + kind_of(f.node));
    return out;
  }
  std::vector<Field> merges;
  std::set<std::string> seen;
  for (const auto& kv : f.node) {
    Field e = entry_field(kv.first, kv.second);
    if (!kv.first.IsScalar() || kv.first.Scalar().empty()) {
      error(e, prefix(what) + "keys must be non-empty strings", {}, At::kKey);
      continue;
    }
    if (e.key == "<<") {
      if (!(e.node.IsMap() || e.node.IsSequence())) {
        error(e, subject(what, "<<") + " (a YAML merge) must name a mapping or a list of mappings");
      } else {
        merges.push_back(std::move(e));
      }
      continue;
    }
    if (!seen.insert(e.key).second) {
      error(e, subject(what, e.key) + " is given twice", "YAML keeps one of them silently; remove one", At::kKey);
      continue;
    }
    out.push_back(std::move(e));
  }
  for (const auto& m : merges) merge_into(m.node, out, 0);
  return out;
}

std::vector<Field> YamlReader::mapping_or_null(const Field& f, std::string_view what) {
  if (f.is_null()) return {};
  return mapping(f, what);
}

std::vector<Field> YamlReader::sequence(const Field& f, std::string_view what) {
  std::vector<Field> out;
  if (!f.node.IsSequence()) {
    error(f, subject(what, f.key) + " must be a list, got " + kind_of(f.node));
    return out;
  }
  std::size_t i = 0;
  for (const auto& item : f.node) {
    Field e{f.key + "[" + std::to_string(i++) + "]", item, item.Mark(), item.Mark()};
    if (e.mark.is_null() || e.is_null()) e.mark = e.key_mark = f.mark;
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<std::string> YamlReader::expand_dollars(const Field& f, std::string_view what, std::string s) {
  if (dollars_ == Dollars::kLiteral || s.find('$') == std::string::npos) return s;
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '$') {
      out += s[i];
      continue;
    }
    char next = i + 1 < s.size() ? s[i + 1] : '\0';
    if (next == '$') {
      out += '$';
      ++i;
    } else if (next == '{' || next == '_' || std::isalpha(static_cast<unsigned char>(next))) {
      std::size_t length = 0;
      if (auto value = interpolate(s, i, length)) {
        out += *value;
        i += length - 1;
        continue;
      }
      error(f, subject(what, f.key) + ": host variables are not interpolated (found '" + reference_at(s, i) + "')",
            "write the value itself; use $$ for a literal $");
      return std::nullopt;
    } else {
      out += '$';
    }
  }
  return out;
}

std::optional<std::string> YamlReader::interpolate(const std::string& s, std::size_t i, std::size_t& length) const {
  if (!interpolation_) return std::nullopt;
  auto name_end = [&](std::size_t from) {
    while (from < s.size() && is_name_char(s[from])) ++from;
    return from;
  };
  if (s[i + 1] != '{') {
    std::size_t end = name_end(i + 1);
    auto it = interpolation_->values.find(s.substr(i + 1, end - i - 1));
    if (it == interpolation_->values.end()) return std::nullopt;
    length = end - i;
    return it->second;
  }
  std::size_t close = s.find('}', i + 2);
  if (close == std::string::npos) return std::nullopt;
  std::size_t end = name_end(i + 2);
  std::string name = s.substr(i + 2, end - i - 2);
  std::string rest = s.substr(end, close - end);  // "", ":-text" or "-text"
  std::optional<std::string> fallback;
  if (rest.rfind(":-", 0) == 0) fallback = rest.substr(2);
  else if (rest.rfind('-', 0) == 0) fallback = rest.substr(1);
  else if (!rest.empty()) return std::nullopt;  // ${NAME:?error} and the like
  length = close - i + 1;
  if (auto it = interpolation_->values.find(name); it != interpolation_->values.end()) return it->second;
  if (interpolation_->defaults && fallback) return fallback;
  return std::nullopt;
}

std::optional<std::string> YamlReader::string(const Field& f, std::string_view what) {
  if (!f.node.IsScalar()) {
    error(f, subject(what, f.key) + " must be a string, got " + kind_of(f.node));
    return std::nullopt;
  }
  return expand_dollars(f, what, f.node.Scalar());
}

std::optional<bool> YamlReader::boolean(const Field& f, std::string_view what) {
  if (f.node.IsScalar()) {
    std::string s = f.node.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  error(f, subject(what, f.key) + " must be true or false, got " + kind_of(f.node));
  return std::nullopt;
}

std::optional<std::int64_t> YamlReader::integer(const Field& f, std::string_view what) {
  if (f.node.IsScalar()) {
    const std::string& s = f.node.Scalar();
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (!s.empty() && ec == std::errc() && p == s.data() + s.size()) return v;
  }
  error(f, subject(what, f.key) + " must be an integer, got " + kind_of(f.node));
  return std::nullopt;
}

std::optional<double> YamlReader::number(const Field& f, std::string_view what) {
  if (f.node.IsScalar()) {
    const std::string& s = f.node.Scalar();
    double v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (!s.empty() && ec == std::errc() && p == s.data() + s.size() && std::isfinite(v)) return v;
  }
  error(f, subject(what, f.key) + " must be a number, got " + kind_of(f.node));
  return std::nullopt;
}

std::optional<std::vector<std::string>> YamlReader::strings(const Field& f, std::string_view what, Strings shape) {
  const bool single = shape == Strings::kStringOrList;
  if (single && f.node.IsScalar()) {
    auto s = string(f, what);
    if (!s) return std::nullopt;
    return std::vector<std::string>{*s};
  }
  if (!f.node.IsSequence()) {
    error(f, subject(what, f.key) + " must be a list" + (single ? " or a string" : "") + ", got " + kind_of(f.node));
    return std::nullopt;
  }
  std::vector<std::string> out;
  bool ok = true;
  for (const auto& item : sequence(f, what)) {
    auto s = string(item, what);
    if (s)
      out.push_back(std::move(*s));
    else
      ok = false;
  }
  if (!ok) return std::nullopt;
  return out;
}

void YamlReader::unknown_key(const Field& entry, std::string_view what, const std::vector<std::string>& known,
                             std::string fallback_hint) {
  std::string close = closest_match(entry.key, known);
  std::string hint = close.empty() ? std::move(fallback_hint) : "did you mean '" + close + "'?";
  error(entry, prefix(what) + "unsupported key '" + entry.key + "'", hint, At::kKey);
}

std::vector<Field> YamlReader::known_keys(const std::vector<Field>& entries, std::string_view what,
                                          const std::vector<std::string>& known) {
  std::vector<Field> out;
  for (const auto& e : entries) {
    if (std::find(known.begin(), known.end(), e.key) != known.end()) {
      out.push_back(e);
    } else {
      std::string all;
      for (const auto& k : known) all += (all.empty() ? "" : ", ") + k;
      unknown_key(e, what, known, "supported: " + all);
    }
  }
  return out;
}

}  // namespace forge::manifest
