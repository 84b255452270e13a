// Tolokaforge's canonical state hash: unstable fields dropped, Python's sorted compact JSON, SHA-256.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"

namespace forge {

// `v` as Python's json.dumps(v, sort_keys=True, separators=(",", ":")) writes it (ensure_ascii:
// non-ASCII as \uXXXX; floats as repr(): "1.0", "1e+16", "1.5e-07"), so hashes match Tolokaforge's.
std::string python_json(const json::Value& v);

// A copy of `state` ({table: [records]}) without the unstable fields: "table.field" drops the
// field from that table's records, a bare "field" from every table's records.
json::Document stable_state(const json::Value& state, const std::vector<std::string>& unstable_fields);

// The lower-case hex SHA-256 of python_json(stable_state(state, unstable_fields)); with no
// unstable fields this is the full hash.
std::string state_hash(const json::Value& state, const std::vector<std::string>& unstable_fields = {});

}  // namespace forge
