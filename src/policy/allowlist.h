// Normalising limited_internet allowlists into entries squid's `dstdomain` ACL accepts and matches.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"

namespace forge::policy {

// Turns what a task author wrote into squid dstdomain entries (reference/egress.md §1):
// lower-cased; scheme, port, path and a trailing dot stripped; `*.x` written as `.x` (the domain
// and every subdomain); an exact name dropped when its `.parent` is listed, and `x` + `.x` kept
// as `.x`, because squid FATALs on such overlaps. Returns the entries sorted and deduplicated.
// IP literals (squid matches names, not addresses, here) and names breaking the label rules
// (letters, digits, '-'; labels of 1-63 characters; 253 in all) are kInvalid errors naming the entry.
Result<std::vector<std::string>> normalise_allowlist(const std::vector<std::string>& entries);

}  // namespace forge::policy
