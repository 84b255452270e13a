// The json-db's two mutation languages: PATCH table operations (insert, update, delete, upsert)
// and the db_update tool's JSONPath operations (replace, add, remove).
#pragma once

#include <cstdint>

#include "core/json.h"
#include "core/result.h"

namespace forge::services {

// Checks every `operations` entry of a PATCH body before any is applied, so a bad request
// changes nothing: insert/upsert need `record` (object), update needs `filter` and `set`
// (objects), delete needs `filter`, upsert's `key` is a string (default "id").
Status validate_table_ops(const json::Value& operations);

// Applies validated operations to `table` (an array of records); returns the affected rows.
// Records match a filter when every filter field is present and equal (1 == 1.0, as in Python).
std::int64_t apply_table_ops(json::Value& table, const json::Value& operations, json::Document::AllocatorType& alloc);

// Checks the db_update `ops` list: each {op: replace|add|remove, path: JSONPath, value?}.
Status validate_path_ops(const json::Value& ops);

// Applies validated path operations to `data`. replace: every match becomes `value`; remove:
// every match leaves its parent; add: appends `value` to the arrays the path selects, otherwise
// sets the path's last member name on the objects its parent path selects. A path that selects
// nothing, or only the root, is kInvalid. Callers apply to a copy so a failure changes nothing.
Status apply_path_ops(json::Document& data, const json::Value& ops);

}  // namespace forge::services
