// Loading a Harbor task directory (docs/harbor.md): task.toml of schema 1.0 to 1.4, instruction.md,
// environment/, tests/, solution/ and steps/, strictly.
#pragma once

#include <string>

#include "core/result.h"
#include "manifest/harbor/harbor_task.h"

namespace forge::manifest {

// `path` is a task directory or its task.toml. Every key of task.toml is typed and checked; a key
// forgectl would have to act on and cannot (gpus > 0, a verifier image of its own, MCP over sse, …)
// is an error saying why; a key with no effect (Harbor ignores it, or forgectl provides it
// otherwise) is accepted with a warning in HarborTask::warnings; a mistyped key is an error with a
// did-you-mean. The files must be there and stay inside the directory (no symlink out of it), each
// within its size limit. Every problem is reported at once, as one kInvalid error with one
// "file:line:col: message" line each (warnings too, marked "warning:"), task.toml's first.
// kNotFound when `path` does not exist or has no task.toml.
Result<HarborTask> load_harbor_task(const std::string& path);

}  // namespace forge::manifest
