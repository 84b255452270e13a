// Which OCI runtime a stack's runner runs under (runc, crun, runsc/gVisor, or the daemon's
// default), and whether this daemon can give it what a stack needs: checked before anything is
// created, with the daemon.json snippet that would register a missing one (docs/environment.md).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "engine/system.h"
#include "manifest/environment.h"

namespace forge::stack {

// What forgectl knows of a runtime: its limits differ by kind, not by the name it is registered under.
enum class RuntimeKind { kRunc, kCrun, kRunsc, kOther };
RuntimeKind runtime_kind(std::string_view name, const engine::RuntimeInfo& registered);

struct RuntimeChoice {
  std::string name;    // as the daemon lists it: the default's own name for "auto"
  bool named = false;  // asked for by name: HostConfig.Runtime is set and verified after create
};

// What the stack asks of its runtime. Every forgectl sandbox has limits (memory, pids); a runner
// on a network needs the runtime to give it one.
struct RuntimeNeeds {
  bool limits = true;
  bool network = true;
};

// The runtime `requested` names on this daemon, or kInvalid saying why it cannot serve: a name the
// daemon does not list (with the snippet to register it), crun where the daemon runs cgroup v1
// (crun 1.8 refuses limits on a v1/hybrid host), runsc registered with --network=none for a
// stack on a network.
Result<RuntimeChoice> choose_runtime(std::string_view requested, const engine::SystemInfo& info,
                                     const RuntimeNeeds& needs = {});

// Why a registered runtime cannot serve `needs` here; empty when it can.
std::string runtime_unfit(std::string_view name, const engine::RuntimeInfo& registered, const engine::SystemInfo& info,
                          const RuntimeNeeds& needs);

// The daemon.json lines that register `name` (runc, crun, runsc get their usual paths), and how to apply them.
std::string runtime_snippet(std::string_view name);

}  // namespace forge::stack
