// The built-in stacks used when a task declares no compose file: core, full, none.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "manifest/compose.h"

namespace forge::manifest {

// core = json-db; full = json-db, mock-web, rag; none = no services (the runner alone).
// The files live in manifests/stacks/ and are compiled into the binary; the result's `path`
// is "builtin:<name>". kNotFound for another name.
Result<ComposeFile> builtin_stack(std::string_view name);

// {"core", "full", "none"}
std::vector<std::string> builtin_stack_names();

}  // namespace forge::manifest
