// Standard base64 (RFC 4648, padded) for the helper protocol's byte fields; core has its own,
// but the helper links no project library.
#pragma once

#include <string>
#include <string_view>

namespace forge::helper {

std::string b64_encode(std::string_view in);
// False on malformed input.
bool b64_decode(std::string_view in, std::string* out);

}  // namespace forge::helper
