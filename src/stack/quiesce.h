// The end of the agent phase: nothing the agent started keeps running while it is graded.
#pragma once

#include "core/result.h"
#include "engine/client.h"
#include "stack/up.h"

namespace forge::stack {

// SIGKILLs every process of the runner's user but the container's init, through the read-only
// helper (`--kill-all`: kill(-1) as that uid, so a setsid, `env -i` or double-forked process
// dies too). Without it a background process could hold json-db's connections while forgectl
// reads the final state, or edit the workspace while grading copies it. The container keeps
// running: its tmpfs workspace lives as long as it does.
Status stop_agent_processes(engine::Client& c, const UpResult& up);

}  // namespace forge::stack
