// The doctor's judgements, kept apart from printing so they can be tested.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/system.h"

namespace forge::cli {

// Engine versions that let containers on internal networks resolve external names through the
// embedded DNS (CVE-2024-29018; fixed in 23.0.11, 25.0.5 and 26.0.0). A warning text, or nothing.
std::optional<std::string> cve_2024_29018_warning(std::string_view engine_version);

// fs.protected_symlinks as /proc/sys/fs/protected_symlinks reads ("0\n"): at 0 a verifier that
// writes a fixed /tmp path follows a link an agent's program planted there. A warning, or nothing.
std::optional<std::string> protected_symlinks_warning(std::string_view value);

// How many /size networks Docker's default pools hold ("about 31" for the built-in pools).
long default_pool_capacity(const std::vector<engine::AddressPool>& pools);

}  // namespace forge::cli
