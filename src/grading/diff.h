// The structured difference between an expected and an actual json-db state, shaped like
// Tolokaforge's runner StateDiff so that existing analysis scripts read it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/result.h"

namespace forge::grading {

// A table lists at most this many records per list (missing, extra, different); the counts in the
// summary are always complete. Keeps grade files readable when an agent wrecks a large table.
inline constexpr std::size_t kMaxDiffRecords = 200;

struct StateDiff {
  // {"tables": {"<name>": {"missing": [record…], "extra": [record…],
  //   "different": [{"expected": record, "actual": record,
  //                  "field_diffs": [{"field": f, "expected": v, "actual": v}…]}…],
  //   "truncated": true (only when a list was cut)}…},
  //  "summary": "<summary>"}
  // Only tables that differ appear.
  std::string json;
  // "State mismatch: orders: 0 missing, 1 extra, 1 different; users: …" or "States match".
  std::string summary;
  bool empty = true;  // the states are equal
};

// Compares two states ({"table": [records], …}; a table absent on one side is empty there).
// Records are compared as whole values (a multiset: duplicates count). A missing and an extra
// record are paired as "different" when they share the first non-null id-like field ("id" or
// "*_id", in sorted order) and it is equal, or, without such a field, when at least half of their
// common fields are equal. A table that is not an array is compared as one record.
// kInvalid when either text is not a JSON object.
Result<StateDiff> diff_states(std::string_view expected_json, std::string_view actual_json);

}  // namespace forge::grading
