// The patterns of grading.yaml's `egress` rules: host names as the allowlist writes them, and
// path globs. Shared by the parser (which refuses bad ones) and the grader (which matches).
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "manifest/python_regex.h"

namespace forge::manifest {

// A forbid_hosts entry in its matching form, or kInvalid saying why not: lower-cased, a trailing
// dot dropped, `*.example.com` written `.example.com` (the name and every subdomain, as the
// allowlist reads it); `example.com` is that name only. Names only (no scheme, port, path or
// other `*`); labels of letters, digits, '-' and '_', 1–63 characters, 253 in all.
Result<std::string> normalise_host_pattern(std::string_view raw);

// Whether `host` (as the ledger has it: lower case, no trailing dot) matches a normalised pattern.
// Case-insensitive all the same, so a hand-written ledger cannot slip past with capitals.
bool host_pattern_matches(std::string_view pattern, std::string_view host);

// A forbid_paths glob compiled for matching a whole request path: `*` matches any run of
// characters (`/` included); everything else is literal and case-sensitive. It must start with
// `/` and be at most limits::kMaxEgressPathPatternBytes long; kInvalid says why not.
Result<PythonRegex> compile_path_glob(std::string_view glob);

// The part of a request path a glob is matched against: the path without its query string,
// unless the glob itself names one (contains `?`).
std::string_view path_for_glob(std::string_view path, std::string_view glob);

}  // namespace forge::manifest
