// Strict reading of TOML documents (Harbor's task.toml): typed getters that record a Diagnostic
// at the value's line:column instead of throwing. Internal to src/manifest: this is the only
// header that names toml++, and only the parsers' .cc files include it.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/diagnostics.h"

namespace forge::manifest {

// A value reached in a document, with the name it was reached by and where it is.
struct TomlField {
  std::string key;  // as written ("cpus"), or "steps[2]" for an array item; "" for the root
  const toml::node* node = nullptr;
  int key_line = 0, key_column = 0;  // the key; for an array item, the item itself
  int line = 0, column = 0;          // the value
};

// "environment.healthcheck" + "retries" → "[environment.healthcheck] 'retries'"; the subject of a
// message about `key` in the table `table` ("" is the document's top level).
std::string toml_subject(std::string_view table, std::string_view key);
// "steps[1].verifier": a table path for messages.
std::string toml_path(std::string_view table, std::string_view key);

enum class TomlAt { kValue, kKey };

class TomlReader {
 public:
  TomlReader(std::string file, Diagnostics& diags) : file_(std::move(file)), diags_(diags) {}

  const std::string& file() const { return file_; }
  Diagnostics& diagnostics() { return diags_; }

  // The document; a syntax error becomes a diagnostic at its line, and nullopt.
  std::optional<toml::table> parse(std::string_view text);
  TomlField root(const toml::table& doc) const;

  void error(const TomlField& f, std::string message, std::string hint = {}, TomlAt at = TomlAt::kValue);
  // A key accepted without effect: always at the key.
  void warning(const TomlField& f, std::string message, std::string hint = {});

  // A table's entries sorted by position in the file (toml++ keeps them sorted by name). Not a
  // table: a diagnostic and no entries. `table` names it in messages ("environment").
  std::vector<TomlField> entries(const TomlField& f, std::string_view table);
  // An array's items; more than `max_items` is an error and none are returned.
  std::vector<TomlField> items(const TomlField& f, std::string_view table, std::size_t max_items);

  std::optional<std::string> string(const TomlField& f, std::string_view table);
  // An integer or a float (Harbor's float fields take both).
  std::optional<double> number(const TomlField& f, std::string_view table);
  // An integer, or a float without a fraction (pydantic takes 2.0 for an int field).
  std::optional<std::int64_t> integer(const TomlField& f, std::string_view table);
  std::optional<bool> boolean(const TomlField& f, std::string_view table);
  // Username or uid: a string, or a non-negative integer kept as its digits.
  std::optional<std::string> user(const TomlField& f, std::string_view table);
  std::optional<std::vector<std::string>> strings(const TomlField& f, std::string_view table, std::size_t max_items);

  // A key of `table` that is not in `known`: with a close match an error saying "did you mean";
  // otherwise a warning that Harbor ignores it (its models drop unknown keys), so it has no effect.
  void unknown_key(const TomlField& entry, std::string_view table, const std::vector<std::string>& known);

 private:
  std::string file_;
  Diagnostics& diags_;
};

// "a string", "an integer", … for "must be X, got Y" messages.
std::string toml_kind(const toml::node* n);

}  // namespace forge::manifest
