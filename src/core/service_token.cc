// Service tokens: getrandom(2) for control tokens, HMAC-SHA256 (core/sha256.h) for agent tokens.
#include "core/service_token.h"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "core/sha256.h"

namespace forge {

namespace {

constexpr std::string_view kAgentPrefix = "agent.";
constexpr std::size_t kMacHex = 64;

bool is_lower_hex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string agent_mac(std::string_view control_token, std::string_view ns, TokenPermission perm) {
  std::string message = "agent:";
  message.append(ns).append(":").append(to_string(perm));
  return hmac_sha256_hex(control_token, message);
}

}  // namespace

std::string_view to_string(TokenPermission p) { return p == TokenPermission::kWrite ? "write" : "read"; }

Result<std::string> new_control_token() {
  std::array<unsigned char, 32> bytes{};
  std::size_t got = 0;
  while (got < bytes.size()) {
    ssize_t n = ::getrandom(bytes.data() + got, bytes.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return fail(Errc::kIo, std::string("cannot read random bytes for a service token: ") + std::strerror(errno));
    got += static_cast<std::size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  return token;
}

Status check_control_token(std::string_view token) {
  if (token.size() < kControlTokenMinHex || token.size() > kControlTokenMaxHex || !is_lower_hex(token))
    return fail(Errc::kInvalid, "the service token must be " + std::to_string(kControlTokenMinHex) + " to " +
                                    std::to_string(kControlTokenMaxHex) + " lower-case hex digits (it has " +
                                    std::to_string(token.size()) + " characters)");
  return {};
}

std::string service_control_token(std::string_view control_token, std::string_view service) {
  return hmac_sha256_hex(control_token, "service:" + std::string(service));
}

std::map<std::string, std::vector<std::string>> service_token_env(std::string_view control_token) {
  const std::string var = std::string(kServiceTokenEnv) + "=";
  return {{"json-db", {var + std::string(control_token)}},
          {"rag", {var + service_control_token(control_token, "rag")}}};
}

std::string agent_token(std::string_view control_token, std::string_view ns, TokenPermission perm) {
  std::string token(kAgentPrefix);
  token.append(to_string(perm)).append(".").append(ns).append(".").append(agent_mac(control_token, ns, perm));
  return token;
}

std::optional<AgentTokenClaim> parse_agent_token(std::string_view token) {
  if (token.substr(0, kAgentPrefix.size()) != kAgentPrefix) return std::nullopt;
  std::string_view rest = token.substr(kAgentPrefix.size());
  AgentTokenClaim claim;
  if (rest.substr(0, 5) == "read.") {
    claim.perm = TokenPermission::kRead;
    rest.remove_prefix(5);
  } else if (rest.substr(0, 6) == "write.") {
    claim.perm = TokenPermission::kWrite;
    rest.remove_prefix(6);
  } else {
    return std::nullopt;
  }
  // The namespace may hold '.', so the MAC is found from the end.
  if (rest.size() < kMacHex + 2 || rest[rest.size() - kMacHex - 1] != '.') return std::nullopt;
  std::string_view ns = rest.substr(0, rest.size() - kMacHex - 1), mac = rest.substr(rest.size() - kMacHex);
  if (!is_lower_hex(mac)) return std::nullopt;
  for (char c : ns)
    if (c <= ' ' || c > '~') return std::nullopt;
  claim.ns = std::string(ns);
  claim.mac = std::string(mac);
  return claim;
}

bool verify_agent_token(std::string_view control_token, const AgentTokenClaim& claim) {
  return constant_time_equal(agent_mac(control_token, claim.ns, claim.perm), claim.mac);
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;  // lengths are public: tokens have fixed sizes
  // volatile: the compiler may not turn the loop into an early exit on the first difference.
  volatile unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    diff = static_cast<unsigned char>(diff | (static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i])));
  return diff == 0;
}

}  // namespace forge
