// mock-web's json-db portal: how a task page's JavaScript reads and writes the trial's json-db state
// (Tolokaforge's window.__JSON_DB_BASE), while the agent's other tools cannot use it to forge state.
//
// The trial writes a portal file into mock-web's container once the trial's browser runs
// (trial/portal_use.h): the trial id, the browser container's address, where json-db is, and the
// trial's agent read and write tokens. mock-web then
//   - puts `window.__JSON_DB_BASE = "/api/json-db/trials/<trial>"` into every HTML page it serves;
//   - forwards requests under that path to json-db's /trials/<trial>/…, with the trial's token,
//     only when they come from the browser container's own address (the runner has no capability
//     to forge a source address), and a write only with a same-origin Origin and a JSON body, so a
//     page the agent serves elsewhere cannot drive it (docs/services.md, "The json-db portal").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/portal_config.h"
#include "core/result.h"
#include "services/http_server.h"
#include "services/local_client.h"

namespace forge::services {

inline constexpr std::size_t kMaxPortalBody = 1u << 20;  // a page's write; larger: 413
inline constexpr const char* kPortalRoute = "/api/json-db/trials/";

// The portal file at `path`: nullopt when there is none (no browser in the trial, or not yet).
Result<std::optional<PortalConfig>> read_portal_config(const std::string& path);

// "/api/json-db/trials/<trial, percent-encoded>": window.__JSON_DB_BASE, same-origin.
std::string portal_base(const PortalConfig& c);
// `html` with <script>window.__JSON_DB_BASE="…";</script> right after its <head …> tag (else
// after <html …>, else after a leading <!DOCTYPE …>, else at the start), before any page script.
std::string inject_db_base(std::string_view html, const PortalConfig& c);

// How the portal reaches json-db: local_request in mock-web, a fake in unit tests.
using PortalSend = std::function<Result<LocalReply>(const LocalRequest&)>;

// A request under kPortalRoute: `parts` its decoded path segments after "api/json-db/trials".
Response portal_handle(const Request& req, const std::vector<std::string>& parts, const PortalConfig& c,
                       const PortalSend& send);

}  // namespace forge::services
