// Bearer tokens for the built-in services: a random per-stack control token, and agent tokens
// derived from it with HMAC-SHA256, so the host derives them with no round trip and json-db
// verifies them without storing any (docs/services.md, "Authentication").
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace forge {

// The environment variable that carries the control token into a service container at create.
inline constexpr std::string_view kServiceTokenEnv = "FORGECTL_SERVICE_TOKEN";
// A control token is 64 to 256 lower-case hex digits: at least 32 bytes of entropy.
inline constexpr std::size_t kControlTokenMinHex = 64;
inline constexpr std::size_t kControlTokenMaxHex = 256;

// What an agent token allows on its one namespace.
enum class TokenPermission {
  kRead,   // query and state (state, state/stable, state/hash)
  kWrite,  // PATCH state/{table} and update
};
std::string_view to_string(TokenPermission p);  // "read", "write"

// A fresh control token: 32 bytes from getrandom(2) as 64 lower-case hex digits.
Result<std::string> new_control_token();
// kInvalid unless `token` is 64–256 lower-case hex digits; the message never repeats the token.
Status check_control_token(std::string_view token);

// The control token of service `service` ("rag") in a stack whose control token is
// `control_token`: hex(HMAC-SHA256(key = control token text, message = "service:" + service)), 64
// lower-case hex digits. Each service other than json-db gets its own, so an agent token one service
// accepts is worth nothing at another (rag's search token never reads json-db), and knowing a
// service's token reveals neither the stack's nor another service's.
std::string service_control_token(std::string_view control_token, std::string_view service);

// The environment each built-in service of a stack gets at create, by compose service name, for the
// stack's `control_token`: json-db's FORGECTL_SERVICE_TOKEN is the token itself, rag's is
// service_control_token(…, "rag"). The runner gets none of it.
std::map<std::string, std::vector<std::string>> service_token_env(std::string_view control_token);

// The agent token for `ns` and `perm`:
//   "agent." + perm + "." + ns + "." + hex(HMAC-SHA256(key = control token text,
//                                                       message = "agent:" + ns + ":" + perm))
// It names its scope in the clear, so the service can tell a forged token (401) from a genuine one
// used outside its scope (403); only the MAC proves it, and it cannot be turned back into the
// control token.
std::string agent_token(std::string_view control_token, std::string_view ns, TokenPermission perm);

// An agent token taken apart; nothing is verified yet.
struct AgentTokenClaim {
  TokenPermission perm = TokenPermission::kRead;
  std::string ns;
  std::string mac;  // 64 lower-case hex digits
};
// nullopt unless `token` has the agent token's shape (a non-empty printable namespace, no spaces).
std::optional<AgentTokenClaim> parse_agent_token(std::string_view token);
// True when `claim` was derived from `control_token`; compares in constant time.
bool verify_agent_token(std::string_view control_token, const AgentTokenClaim& claim);

// Equality whose time depends only on the lengths, never on where the inputs differ.
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace forge
