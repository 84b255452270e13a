// Maps daemon responses and transport failures to forge::Error, in one place.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "engine/transport.h"

namespace forge::engine {

// The daemon's own message: the JSON `message` field, else the trimmed body text.
std::string daemon_message(std::string_view body);
// 400 → kBadRequest, 403 → kForbidden, 404 → kNotFound, 409 → kConflict, 502–504 → kUnavailable,
// other ≥ 500 → kServer. `what` names the call ("POST /containers/create").
Error error_from_status(long status, std::string_view body, std::string_view what);
// Returns an error when the status is not one of the accepted ones.
Status check_status(const Response& resp, std::initializer_list<long> ok, std::string_view what);

}  // namespace forge::engine
