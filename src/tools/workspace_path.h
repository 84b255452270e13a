// Maps a path as the model writes it to a path inside the workspace, refusing anything outside.
#pragma once

#include <string>

#include "core/result.h"

namespace forge::tools {

// Tolokaforge tasks address the workspace as /env/fs/agent-visible; forgectl's runner has it at
// /work. Both prefixes, and relative paths, name the same files.
inline constexpr const char* kLegacyWorkspace = "/env/fs/agent-visible";

// Returns the path relative to the workspace ("" for the workspace itself), normalised. Refuses
// (Errc::kForbidden) absolute paths elsewhere and ".." that climbs out; symlinks are the
// sandbox's to refuse, where the file is.
Result<std::string> workspace_relative(std::string_view path, std::string_view workspace);

}  // namespace forge::tools
