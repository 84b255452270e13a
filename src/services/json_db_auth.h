// The services' bearer tokens (json-db's, and rag's with its own control token): the control token
// may do everything; an agent token (derived from it, core/service_token.h) may only read or only
// write its one namespace. Nothing else gets in.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "core/result.h"
#include "core/service_token.h"
#include "services/http_server.h"

namespace forge::services {

// What a route needs.
enum class Access {
  kRead,     // query, state, state/stable, state/hash (and the legacy /query, /dump)
  kWrite,    // PATCH state/{table}, update (and the legacy /update)
  kControl,  // init, reset, snapshots, restore, delete (and the legacy /reset): the control token only
};

// Whether a service without a token may start (--insecure-no-auth, for local debugging).
enum class AuthMode { kRequired, kInsecureNoAuth };

// Who sent a request, once its token checked out.
struct Caller {
  bool control = false;   // the control token, or authentication disabled
  AgentTokenClaim agent;  // when !control: the agent token's verified scope
};

class JsonDbAuth {
 public:
  // Enforces `control_token`, which must pass check_control_token(). `service` names the service
  // in messages and in the 401's realm.
  static Result<JsonDbAuth> with_control_token(std::string control_token, std::string service = "json-db");
  // Lets every request through as the control token would.
  static JsonDbAuth insecure_no_auth(std::string service = "json-db") {
    return JsonDbAuth(std::string(), std::move(service));
  }
  // What `forgectl serve json-db` (or rag) makes of FORGECTL_SERVICE_TOKEN (`env_token`, nullopt or
  // empty when unset) and its --insecure-no-auth flag: a token given is enforced; no token is an
  // error unless the flag says to serve without authentication.
  static Result<JsonDbAuth> configure(std::optional<std::string> env_token, AuthMode mode,
                                      std::string service = "json-db");

  bool required() const { return !control_.empty(); }

  // The request's caller, or the 401 reply: no Authorization header, more than one, not
  // "Bearer <token>", or a token that is neither the control token nor a genuine agent token.
  std::variant<Caller, Response> authenticate(const Request& req) const;
  // nullopt when `caller` may do `need` on trial `ns`; otherwise the 403 reply.
  static std::optional<Response> authorize(const Caller& caller, const Request& req, std::string_view ns, Access need);

 private:
  JsonDbAuth(std::string control, std::string service) : control_(std::move(control)), service_(std::move(service)) {}
  std::string control_;  // empty: authentication disabled
  std::string service_;  // "json-db", "rag"
};

}  // namespace forge::services
