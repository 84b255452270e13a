// Strict reading of toml++ nodes: typed getters that record diagnostics instead of throwing.
#include "manifest/harbor/toml_reader.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <tuple>

namespace forge::manifest {

namespace {

int line_of(const toml::source_region& r) { return static_cast<int>(r.begin.line); }
int column_of(const toml::source_region& r) { return static_cast<int>(r.begin.column); }

std::string shown(std::string s) { return s.size() > 40 ? s.substr(0, 37) + "..." : s; }

}  // namespace

std::string toml_kind(const toml::node* n) {
  if (!n) return "nothing";
  switch (n->type()) {
    case toml::node_type::string:
      return "'" + shown(std::string(*n->as_string())) + "'";
    case toml::node_type::integer:
      return "the integer " + std::to_string(n->as_integer()->get());
    case toml::node_type::floating_point:
      return "the number " + shown(std::to_string(n->as_floating_point()->get()));
    case toml::node_type::boolean:
      return n->as_boolean()->get() ? "true" : "false";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::date:
    case toml::node_type::time:
    case toml::node_type::date_time:
      return "a date or time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

std::string toml_path(std::string_view table, std::string_view key) {
  if (table.empty()) return std::string(key);
  if (key.empty()) return std::string(table);
  // Array items are written "steps[2]", so they attach without a dot.
  return std::string(table) + (key.front() == '[' ? "" : ".") + std::string(key);
}

std::string toml_subject(std::string_view table, std::string_view key) {
  std::string s = table.empty() ? "" : "[" + std::string(table) + "]";
  if (key.empty()) return s.empty() ? std::string("the document") : s;
  return s + (s.empty() ? "" : " ") + "'" + std::string(key) + "'";
}

std::optional<toml::table> TomlReader::parse(std::string_view text) {
  try {
    return toml::parse(text, std::string_view(file_));
  } catch (const toml::parse_error& e) {
    diags_.add(Diagnostic{
        file_, line_of(e.source()), column_of(e.source()), "TOML syntax error: " + std::string(e.description()), {}});
  }
  return std::nullopt;
}

TomlField TomlReader::root(const toml::table& doc) const { return TomlField{"", &doc, 1, 1, 1, 1}; }

void TomlReader::error(const TomlField& f, std::string message, std::string hint, TomlAt at) {
  bool key = at == TomlAt::kKey;
  diags_.add(
      Diagnostic{file_, key ? f.key_line : f.line, key ? f.key_column : f.column, std::move(message), std::move(hint)});
}

void TomlReader::warning(const TomlField& f, std::string message, std::string hint) {
  diags_.add(Diagnostic{file_, f.key_line, f.key_column, std::move(message), std::move(hint), Severity::kWarning});
}

std::vector<TomlField> TomlReader::entries(const TomlField& f, std::string_view table) {
  std::vector<TomlField> out;
  const toml::table* t = f.node ? f.node->as_table() : nullptr;
  if (!t) {
    error(f, toml_subject(table, {}) + " must be a table, got " + toml_kind(f.node));
    return out;
  }
  for (const auto& [k, v] : *t) {
    const auto& ks = k.source();
    const auto& vs = v.source();
    TomlField e{std::string(k.str()), &v, line_of(ks), column_of(ks), line_of(vs), column_of(vs)};
    // A value defined by a [header] has no position of its own in some toml++ paths.
    if (e.line == 0) e.line = e.key_line, e.column = e.key_column;
    out.push_back(std::move(e));
  }
  std::stable_sort(out.begin(), out.end(), [](const TomlField& a, const TomlField& b) {
    return std::tie(a.key_line, a.key_column) < std::tie(b.key_line, b.key_column);
  });
  return out;
}

std::vector<TomlField> TomlReader::items(const TomlField& f, std::string_view table, std::size_t max_items) {
  std::vector<TomlField> out;
  const toml::array* a = f.node ? f.node->as_array() : nullptr;
  if (!a) {
    error(f, toml_subject(table, f.key) + " must be an array, got " + toml_kind(f.node));
    return out;
  }
  if (a->size() > max_items) {
    error(f, toml_subject(table, f.key) + " has " + std::to_string(a->size()) + " items; at most " +
                 std::to_string(max_items) + " are read");
    return out;
  }
  for (std::size_t i = 0; i < a->size(); ++i) {
    const toml::node& n = *a->get(i);
    int line = line_of(n.source()), column = column_of(n.source());
    if (line == 0) line = f.line, column = f.column;
    out.push_back(TomlField{f.key + "[" + std::to_string(i) + "]", &n, line, column, line, column});
  }
  return out;
}

std::optional<std::string> TomlReader::string(const TomlField& f, std::string_view table) {
  if (const auto* s = f.node ? f.node->as_string() : nullptr) return s->get();
  error(f, toml_subject(table, f.key) + " must be a string, got " + toml_kind(f.node));
  return std::nullopt;
}

std::optional<double> TomlReader::number(const TomlField& f, std::string_view table) {
  if (const auto* i = f.node ? f.node->as_integer() : nullptr) return static_cast<double>(i->get());
  if (const auto* d = f.node ? f.node->as_floating_point() : nullptr; d && std::isfinite(d->get())) return d->get();
  error(f, toml_subject(table, f.key) + " must be a number, got " + toml_kind(f.node));
  return std::nullopt;
}

std::optional<std::int64_t> TomlReader::integer(const TomlField& f, std::string_view table) {
  if (const auto* i = f.node ? f.node->as_integer() : nullptr) return i->get();
  if (const auto* d = f.node ? f.node->as_floating_point() : nullptr) {
    double v = d->get();
    if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 9.0e15) return static_cast<std::int64_t>(v);
  }
  error(f, toml_subject(table, f.key) + " must be an integer, got " + toml_kind(f.node));
  return std::nullopt;
}

std::optional<bool> TomlReader::boolean(const TomlField& f, std::string_view table) {
  if (const auto* b = f.node ? f.node->as_boolean() : nullptr) return b->get();
  error(f, toml_subject(table, f.key) + " must be true or false, got " + toml_kind(f.node));
  return std::nullopt;
}

namespace {

// Docker's runtime (runc) takes uids and gids from 0 to 2^31 - 1; a larger or negative one passes
// Docker's create and fails every exec.
constexpr std::int64_t kMaxId = 2147483647;

// Why `user` ("name", "uid", "uid:gid", "name:group") cannot name a user Docker runs; "" when it can.
std::string bad_user(std::string_view user) {
  const std::size_t colon = user.find(':');
  if (colon != std::string_view::npos && user.find(':', colon + 1) != std::string_view::npos)
    return "it has more than one ':'";
  std::vector<std::string_view> parts = {user.substr(0, colon)};
  if (colon != std::string_view::npos) parts.push_back(user.substr(colon + 1));
  for (std::string_view part : parts) {
    if (part.empty()) return "it has an empty user or group";
    const unsigned char c = static_cast<unsigned char>(part.front());
    if (!std::isdigit(c) && c != '-' && c != '+') continue;  // a name
    const bool digits = std::all_of(part.begin(), part.end(), [](unsigned char d) { return std::isdigit(d) != 0; });
    if (!digits || part.size() > 10 || std::stoll(std::string(part)) > kMaxId)
      return "'" + std::string(part) + "' is not a uid or gid from 0 to " + std::to_string(kMaxId);
  }
  return {};
}

}  // namespace

std::optional<std::string> TomlReader::user(const TomlField& f, std::string_view table) {
  if (const auto* i = f.node ? f.node->as_integer() : nullptr) {
    if (i->get() >= 0 && i->get() <= kMaxId) return std::to_string(i->get());
    error(f, toml_subject(table, f.key) + " must be a uid from 0 to " + std::to_string(kMaxId) + ", got " +
                 std::to_string(i->get()));
    return std::nullopt;
  }
  if (const auto* s = f.node ? f.node->as_string() : nullptr; s && !s->get().empty()) {
    if (std::string why = bad_user(s->get()); !why.empty()) {
      error(f, toml_subject(table, f.key) + " = \"" + s->get() + "\": " + why,
            "give a user name of the image, a uid or \"uid:gid\" (0 to " + std::to_string(kMaxId) + ")");
      return std::nullopt;
    }
    return s->get();
  }
  error(f, toml_subject(table, f.key) + " must be a user name or a uid, got " + toml_kind(f.node));
  return std::nullopt;
}

std::optional<std::vector<std::string>> TomlReader::strings(const TomlField& f, std::string_view table,
                                                            std::size_t max_items) {
  if (!f.node || !f.node->is_array()) {
    error(f, toml_subject(table, f.key) + " must be an array of strings, got " + toml_kind(f.node));
    return std::nullopt;
  }
  std::vector<std::string> out;
  bool ok = true;
  for (const auto& item : items(f, table, max_items)) {
    if (auto s = string(item, table))
      out.push_back(std::move(*s));
    else
      ok = false;
  }
  if (!ok || out.size() != f.node->as_array()->size()) return std::nullopt;
  return out;
}

void TomlReader::unknown_key(const TomlField& entry, std::string_view table, const std::vector<std::string>& known) {
  std::string close = closest_match(entry.key, known);
  if (!close.empty()) {
    std::string where = table.empty() ? "" : "[" + std::string(table) + "] ";
    error(entry, where + "unknown key '" + entry.key + "'", "did you mean '" + close + "'?", TomlAt::kKey);
    return;
  }
  warning(entry, toml_subject(table, entry.key) + " is not a key Harbor reads; it has no effect",
          "Harbor ignores keys it does not know, and so does forgectl");
}

}  // namespace forge::manifest
