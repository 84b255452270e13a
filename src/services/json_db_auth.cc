// json-db's token checks. Replies name the scope a token has, never a token or the secret.
#include "services/json_db_auth.h"

#include "core/strings.h"

namespace forge::services {

namespace {

Response unauthorized(std::string_view message, const std::string& service) {
  Response r = json_error(401, message);
  r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"" + service + "\"");
  return r;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

Result<JsonDbAuth> JsonDbAuth::with_control_token(std::string control_token, std::string service) {
  if (auto st = check_control_token(control_token); !st) return st.fail();
  return JsonDbAuth(std::move(control_token), std::move(service));
}

Result<JsonDbAuth> JsonDbAuth::configure(std::optional<std::string> env_token, AuthMode mode, std::string service) {
  if (env_token && !env_token->empty()) {
    auto auth = with_control_token(std::move(*env_token), std::move(service));
    if (!auth) return auth.fail_with(std::string(kServiceTokenEnv));
    return auth;
  }
  if (mode == AuthMode::kInsecureNoAuth) return insecure_no_auth(std::move(service));
  return fail(Errc::kInvalid, service + " needs its control token in " + std::string(kServiceTokenEnv) + " (" +
                                  std::to_string(kControlTokenMinHex) +
                                  "+ lower-case hex digits); --insecure-no-auth serves without "
                                  "authentication, for local debugging only");
}

std::variant<Caller, Response> JsonDbAuth::authenticate(const Request& req) const {
  if (!required()) return Caller{true, {}};
  auto values = req.header_values("Authorization");
  if (values.empty()) return unauthorized("authentication required: send 'Authorization: Bearer <token>'", service_);
  if (values.size() > 1)
    return unauthorized("send one Authorization header, not " + std::to_string(values.size()), service_);
  std::string_view value = trim(values[0]);
  if (value.size() < 7 || to_lower(value.substr(0, 7)) != "bearer ")
    return unauthorized("the Authorization header must be 'Bearer <token>'", service_);
  std::string_view token = trim(value.substr(7));
  if (auto claim = parse_agent_token(token)) {
    if (!verify_agent_token(control_, *claim)) return unauthorized("invalid token", service_);
    return Caller{false, std::move(*claim)};
  }
  if (!constant_time_equal(token, control_)) return unauthorized("invalid token", service_);
  return Caller{true, {}};
}

std::optional<Response> JsonDbAuth::authorize(const Caller& caller, const Request& req, std::string_view ns,
                                              Access need) {
  if (caller.control) return std::nullopt;
  const AgentTokenClaim& a = caller.agent;
  bool fits = a.ns == ns && ((need == Access::kRead && a.perm == TokenPermission::kRead) ||
                             (need == Access::kWrite && a.perm == TokenPermission::kWrite));
  if (fits) return std::nullopt;
  std::string scope = "this token may only " + std::string(to_string(a.perm)) + " trial '" + a.ns + "'";
  std::string what = req.method + " " + req.path;
  if (need == Access::kControl) return json_error(403, scope + "; " + what + " needs the control token");
  if (a.ns != ns) return json_error(403, scope + ", not trial '" + std::string(ns) + "'");
  return json_error(
      403, scope + "; " + what + " needs a " +
               std::string(to_string(need == Access::kRead ? TokenPermission::kRead : TokenPermission::kWrite)) +
               " token");
}

}  // namespace forge::services
