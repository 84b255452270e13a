// Table-by-table state diff with Tolokaforge's record pairing (runner/grading.py compute_state_diff).
#include "grading/diff.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/json.h"

namespace forge::grading {

namespace {

// Pairing compares every missing record with every extra one; beyond this many candidate pairs
// (a table rewritten wholesale) records stay unpaired rather than making grading quadratic.
constexpr std::size_t kMaxPairings = 250000;

struct TableDiff {
  std::vector<const json::Value*> missing, extra;
  std::vector<std::pair<const json::Value*, const json::Value*>> different;  // expected, actual
  bool any() const { return !missing.empty() || !extra.empty() || !different.empty(); }
};

std::vector<const json::Value*> records_of(const json::Value& state, const std::string& table) {
  std::vector<const json::Value*> out;
  auto it = state.FindMember(table.c_str());
  if (it == state.MemberEnd()) return out;
  if (!it->value.IsArray()) return {&it->value};
  for (const auto& r : it->value.GetArray()) out.push_back(&r);
  return out;
}

std::string key_of(const json::Value& v) {
  std::string text = json::to_string(v);
  auto canon = json::canonical(text);
  return canon ? *canon : text;
}

bool id_like(std::string_view field) {
  return field == "id" || (field.size() > 3 && field.substr(field.size() - 3) == "_id");
}

// Tolokaforge's _records_might_match: the first shared id-like field (sorted) that is non-null on
// both sides decides; otherwise at least half of the common fields must be equal.
bool might_match(const json::Value& a, const json::Value& b) {
  if (!a.IsObject() || !b.IsObject()) return false;
  std::set<std::string> common;
  for (const auto& m : a.GetObject())
    if (b.HasMember(m.name)) common.emplace(m.name.GetString(), m.name.GetStringLength());
  for (const auto& field : common) {
    if (!id_like(field)) continue;
    const json::Value& x = a[field.c_str()];
    const json::Value& y = b[field.c_str()];
    if (!x.IsNull() && !y.IsNull()) return x == y;
  }
  if (common.empty()) return false;
  std::size_t equal = 0;
  for (const auto& field : common) equal += a[field.c_str()] == b[field.c_str()] ? 1 : 0;
  return 2 * equal >= common.size();
}

TableDiff compare_table(const std::vector<const json::Value*>& expected,
                        const std::vector<const json::Value*>& actual) {
  TableDiff d;
  // A multiset match: each expected record consumes one identical actual record.
  std::unordered_map<std::string, std::vector<std::size_t>> unused;
  for (std::size_t j = actual.size(); j-- > 0;) unused[key_of(*actual[j])].push_back(j);
  std::vector<bool> consumed(actual.size(), false);
  for (const json::Value* r : expected) {
    auto it = unused.find(key_of(*r));
    if (it == unused.end() || it->second.empty()) {
      d.missing.push_back(r);
      continue;
    }
    consumed[it->second.back()] = true;
    it->second.pop_back();
  }
  for (std::size_t j = 0; j < actual.size(); ++j)
    if (!consumed[j]) d.extra.push_back(actual[j]);

  if (d.missing.empty() || d.extra.empty() || d.missing.size() * d.extra.size() > kMaxPairings) return d;
  std::vector<bool> paired_missing(d.missing.size(), false), paired_extra(d.extra.size(), false);
  for (std::size_t i = 0; i < d.missing.size(); ++i) {
    for (std::size_t j = 0; j < d.extra.size(); ++j) {
      if (paired_extra[j] || !might_match(*d.missing[i], *d.extra[j])) continue;
      d.different.emplace_back(d.missing[i], d.extra[j]);
      paired_missing[i] = paired_extra[j] = true;
      break;
    }
  }
  auto drop = [](std::vector<const json::Value*>& v, const std::vector<bool>& gone) {
    std::vector<const json::Value*> kept;
    for (std::size_t i = 0; i < v.size(); ++i)
      if (!gone[i]) kept.push_back(v[i]);
    v = std::move(kept);
  };
  drop(d.missing, paired_missing);
  drop(d.extra, paired_extra);
  return d;
}

const json::Value* member_or_null(const json::Value& obj, const std::string& field) {
  auto it = obj.FindMember(field.c_str());
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

void write_value_or_null(json::Writer& w, const json::Value* v) {
  if (v)
    w.raw_value(json::to_string(*v));
  else
    w.null();  // absent, as Tolokaforge's dict.get() reports it
}

void write_field_diffs(json::Writer& w, const json::Value& expected, const json::Value& actual) {
  w.key("field_diffs").begin_array();
  if (expected.IsObject() && actual.IsObject()) {
    std::set<std::string> fields;
    for (const auto& m : expected.GetObject()) fields.emplace(m.name.GetString(), m.name.GetStringLength());
    for (const auto& m : actual.GetObject()) fields.emplace(m.name.GetString(), m.name.GetStringLength());
    for (const auto& f : fields) {
      const json::Value* e = member_or_null(expected, f);
      const json::Value* a = member_or_null(actual, f);
      if (e && a && *e == *a) continue;
      w.begin_object().field("field", f).key("expected");
      write_value_or_null(w, e);
      w.key("actual");
      write_value_or_null(w, a);
      w.end_object();
    }
  }
  w.end_array();
}

void write_table(json::Writer& w, const TableDiff& d) {
  bool truncated = false;
  auto list = [&](const char* name, const std::vector<const json::Value*>& records) {
    w.key(name).begin_array();
    for (std::size_t i = 0; i < records.size() && i < kMaxDiffRecords; ++i) w.raw_value(json::to_string(*records[i]));
    truncated = truncated || records.size() > kMaxDiffRecords;
    w.end_array();
  };
  w.begin_object();
  list("missing", d.missing);
  list("extra", d.extra);
  w.key("different").begin_array();
  for (std::size_t i = 0; i < d.different.size() && i < kMaxDiffRecords; ++i) {
    const auto& [expected, actual] = d.different[i];
    w.begin_object().key("expected").raw_value(json::to_string(*expected));
    w.key("actual").raw_value(json::to_string(*actual));
    write_field_diffs(w, *expected, *actual);
    w.end_object();
  }
  w.end_array();
  if (truncated || d.different.size() > kMaxDiffRecords) w.field("truncated", true);
  w.end_object();
}

}  // namespace

Result<StateDiff> diff_states(std::string_view expected_json, std::string_view actual_json) {
  auto expected = json::parse(expected_json, "the expected state");
  if (!expected) return fail(Errc::kInvalid, expected.error().message);
  auto actual = json::parse(actual_json, "the actual state");
  if (!actual) return fail(Errc::kInvalid, actual.error().message);
  if (!expected->IsObject() || !actual->IsObject())
    return fail(Errc::kInvalid, "a state must be a JSON object of tables");

  std::set<std::string> tables;
  for (const auto& m : expected->GetObject()) tables.emplace(m.name.GetString(), m.name.GetStringLength());
  for (const auto& m : actual->GetObject()) tables.emplace(m.name.GetString(), m.name.GetStringLength());

  std::map<std::string, TableDiff> diffs;
  for (const auto& t : tables) {
    TableDiff d = compare_table(records_of(*expected, t), records_of(*actual, t));
    if (d.any()) diffs.emplace(t, std::move(d));
  }

  StateDiff out;
  out.empty = diffs.empty();
  json::Writer w;
  w.begin_object().key("tables").begin_object();
  std::string parts;
  for (const auto& [name, d] : diffs) {
    w.key(name);
    write_table(w, d);
    if (!parts.empty()) parts += "; ";
    parts += name + ": " + std::to_string(d.missing.size()) + " missing, " + std::to_string(d.extra.size()) +
             " extra, " + std::to_string(d.different.size()) + " different";
  }
  out.summary = out.empty ? "States match" : "State mismatch: " + parts;
  w.end_object().field("summary", out.summary).end_object();
  out.json = w.take();
  return out;
}

}  // namespace forge::grading
