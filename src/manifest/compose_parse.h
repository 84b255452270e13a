// Strict parsing of the compose subset (docs/compose.md) into ComposeFile values.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "manifest/compose.h"
#include "manifest/diagnostics.h"

namespace forge::manifest {

// Parses compose text. `path` names the file in diagnostics and anchors relative paths
// (env_file, build.context); it need not exist for a file without such paths. Every problem in
// the file is reported, as one kInvalid error with one "file:line:col: message" line each.
Result<ComposeFile> parse_compose(std::string_view text, const std::string& path);
// Reads and parses a compose file; kNotFound when it is missing.
Result<ComposeFile> load_compose(const std::string& path);

// The same, adding problems to `diags` (for callers that check several files before failing).
// The returned value is meaningful only when nothing was added.
ComposeFile parse_compose(std::string_view text, const std::string& path, Diagnostics& diags);
ComposeFile load_compose(const std::string& path, Diagnostics& diags);

}  // namespace forge::manifest
