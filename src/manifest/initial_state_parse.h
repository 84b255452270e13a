// json_db normalisation, as Tolokaforge's native adapter turns a task's json_db into tables.
// (The `initial_state:` block itself is read by load_task; see task_parse.h.)
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/result.h"

namespace forge::manifest {

using Tables = std::map<std::string, std::vector<std::string>>;  // table → records as JSON text

// `db` must be an object; each top-level key is a table and its value becomes the records:
//  - a list is the records;
//  - an object whose values are all objects gives those values (records keyed by id; the keys
//    are dropped, as in Tolokaforge);
//  - any other object, or a scalar, is one record.
// A top-level `unstable_fields` is refused: Tolokaforge would load it as a table and hash it;
// the list belongs in initial_state.unstable_fields.
Result<Tables> normalise_json_db(const json::Value& db);
// The same from JSON text; syntax errors name the line and column.
Result<Tables> normalise_json_db(std::string_view json_text);

}  // namespace forge::manifest
