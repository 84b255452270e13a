// Strict parsing of the environment manifest (docs/environment.md) and loading a task's
// environment with its compose file or built-in stack.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "manifest/diagnostics.h"
#include "manifest/environment.h"

namespace forge::manifest {

// Parses a standalone manifest: a YAML mapping of environment keys. `path` names the file in
// diagnostics, and compose_file is resolved against its directory (and must exist). Every
// problem is reported, as one kInvalid error with one "file:line:col: message" line each.
Result<EnvironmentManifest> parse_environment(std::string_view text, const std::string& path);
// The same, adding problems to `diags`; the value is meaningful only when nothing was added.
EnvironmentManifest parse_environment(std::string_view text, const std::string& path, Diagnostics& diags);

// Loads what `forgectl up` and `validate` take: a task directory (with task.yaml), a task.yaml
// (recognised by its name or a top-level task_id), or a standalone manifest. A task without an
// `environment:` block gets the defaults (no_internet, the core stack). The compose file (or
// built-in stack) is parsed and cross-checked against `services`; all problems across the
// manifest and the compose file are reported together. kNotFound when `path` does not exist.
Result<LoadedEnvironment> load_environment(const std::string& path);

}  // namespace forge::manifest
