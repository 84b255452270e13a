// Strict reading of yaml-cpp nodes for the manifest parsers: typed getters that record a
// Diagnostic at the value's line:column instead of throwing. Internal to src/manifest: this is
// the only header that names yaml-cpp, and only the parsers' .cc files include it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/compose.h"
#include "manifest/diagnostics.h"

namespace forge::manifest {

// A value reached in a document, with the name it was reached by and where it is.
struct Field {
  std::string key;  // as written ("ports"), or "cap_add[2]" for a list item
  YAML::Node node;
  YAML::Mark key_mark;  // the key; for a list item, the item itself
  YAML::Mark mark;      // the value; the key's position when the value is empty (yaml-cpp
                        // marks an empty value at the start of the next line)
  bool is_null() const { return !node.IsDefined() || node.IsNull(); }
};

// Compose files escape `$` as `$$` and interpolate `${VAR}` from the host; forgectl takes
// `$$` as `$` and refuses interpolation, so nothing from the host environment leaks in.
enum class Dollars { kLiteral, kCompose };

// The variables a harness defines for its own compose files (Harbor's ${CONTEXT_DIR},
// Terminal-Bench's ${T_BENCH_TEST_DIR}). Under Dollars::kCompose, `${NAME}` and `$NAME` with NAME
// in `values` take its value; with `defaults`, `${NAME:-text}` and `${NAME-text}` of any other NAME
// take `text`, which is what compose does for a variable the host does not set (forgectl passes
// none). Every other variable stays an error.
struct Interpolation {
  std::map<std::string, std::string> values;
  bool defaults = false;
};

enum class At { kValue, kKey };

// Whether a single string may stand for a list of one (`tmpfs: /run`).
enum class Strings { kList, kStringOrList };

class YamlReader {
 public:
  YamlReader(std::string file, Diagnostics& diags, Dollars dollars = Dollars::kLiteral)
      : file_(std::move(file)), diags_(diags), dollars_(dollars) {}

  const std::string& file() const { return file_; }
  // `i` must outlive the reader.
  void set_interpolation(const Interpolation* i) { interpolation_ = i; }
  Diagnostics& diagnostics() { return diags_; }

  // The document's root; a syntax error becomes a diagnostic at its line, and nullopt.
  std::optional<Field> parse(std::string_view text);

  void error(const Field& f, std::string message, std::string hint = {}, At at = At::kValue);
  // What a legacy key does instead of what its author may expect (often nothing): a warning at the
  // key, which never fails the load.
  void warning(const Field& f, std::string message, std::string hint = {}, At at = At::kKey);
  SourceLocation location(const Field& f, At at = At::kValue) const;

  // A mapping's entries in file order with `<<` merges expanded (explicit keys win) and
  // duplicate keys reported. Not a mapping: a diagnostic and no entries. `what` names the
  // owner in messages ("service 'db'"); empty at the top level.
  std::vector<Field> mapping(const Field& f, std::string_view what);
  // Like mapping(), but an empty value (`key:`) is an empty mapping rather than an error.
  std::vector<Field> mapping_or_null(const Field& f, std::string_view what);
  std::vector<Field> sequence(const Field& f, std::string_view what);

  // Scalars. Numbers and booleans are stringified as written.
  std::optional<std::string> string(const Field& f, std::string_view what);
  // true/false in any case; yes/no/on/off are refused, being YAML 1.1's surprises.
  std::optional<bool> boolean(const Field& f, std::string_view what);
  std::optional<std::int64_t> integer(const Field& f, std::string_view what);
  std::optional<double> number(const Field& f, std::string_view what);
  std::optional<std::vector<std::string>> strings(const Field& f, std::string_view what,
                                                  Strings shape = Strings::kList);

  // Reports `entry`'s key as unsupported: with a did-you-mean over `known` when one is close,
  // else with `fallback_hint`.
  void unknown_key(const Field& entry, std::string_view what, const std::vector<std::string>& known,
                   std::string fallback_hint = {});
  // Reports every entry whose key is not in `known`; returns the others.
  std::vector<Field> known_keys(const std::vector<Field>& entries, std::string_view what,
                                const std::vector<std::string>& known);

 private:
  void merge_into(const YAML::Node& merged, std::vector<Field>& out, int depth);
  std::optional<std::string> expand_dollars(const Field& f, std::string_view what, std::string s);
  // The value of the variable reference starting at s[i] ('$'), and how many characters it spans.
  std::optional<std::string> interpolate(const std::string& s, std::size_t i, std::size_t& length) const;

  std::string file_;
  Diagnostics& diags_;
  Dollars dollars_;
  const Interpolation* interpolation_ = nullptr;
};

// "service 'db': 'ports'" — the subject of a message about `key` inside `what`.
std::string subject(std::string_view what, std::string_view key);
// "service 'db': ", or "" at the top level.
std::string prefix(std::string_view what);

}  // namespace forge::manifest
