// json-db's HTTP routes over JsonDb: Tolokaforge's trial-scoped paths (docs/services.md).
#pragma once

#include "services/http_server.h"
#include "services/json_db.h"

namespace forge::services {

// Request bodies nested deeper than this are refused (400): the JSON code recurses.
inline constexpr int kMaxJsonDepth = 128;

// A handler serving `db` (which must outlive it).
Handler json_db_handler(JsonDb& db);

// Parses a request body: UTF-8 validated, nesting bounded by kMaxJsonDepth; kInvalid otherwise.
Result<json::Document> parse_body(std::string_view body);

}  // namespace forge::services
