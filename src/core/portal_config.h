// The json-db portal's file (services/mock_web_portal.h): what the trial tells mock-web once its
// browser runs. One definition for the host, which writes it (trial/portal_use.h), and mock-web,
// which reads it, as core/service_token.h is for the tokens inside it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace forge {

inline constexpr std::size_t kMaxPortalFileBytes = 16u << 10;

struct PortalConfig {
  std::string trial;    // json-db's trial id
  std::string browser;  // the browser container's IP address: the only client answered
  std::string json_db_host = "json-db";
  std::uint16_t json_db_port = 8000;
  std::string read_token, write_token;  // agent tokens of `trial` (core/service_token.h)
};

// The portal file's JSON; parse_portal_config reads it back (kInvalid naming the key at fault).
std::string portal_config_json(const PortalConfig& c);
Result<PortalConfig> parse_portal_config(std::string_view text);

}  // namespace forge
