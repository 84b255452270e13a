// A compose file written for Harbor or Terminal-Bench 1, read as forgectl's compose subset once
// the harness's own plumbing is taken out (docs/harbor.md "Compose files"). Internal to src/manifest.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "manifest/compose.h"
#include "manifest/diagnostics.h"

namespace forge::manifest {

enum class Harness { kHarbor, kTerminalBench1 };

struct HarnessCompose {
  Harness harness = Harness::kHarbor;
  std::string primary;          // the agent's service: "main" | "client"
  bool has_dockerfile = false;  // a Dockerfile beside the compose file, which the harness builds for the primary
  std::string docker_image;     // Harbor's [environment].docker_image: the primary's image when set
  std::optional<std::int64_t> cpus, memory_mb;  // what Harbor's ${CPUS} and ${MEMORY} stand for
};

// Reads `text` (the file at `path`). The harness's variables take the values the harness gives
// them ("${TEST_DIR}" → "/tests"); "${VAR:-text}" of any other variable takes "text", as for an
// unset host variable; the harness's log mounts, image and container names, Harbor's resource
// limits and network mode on the primary are dropped, since forgectl provides each of them
// itself. What remains must be the compose subset (docs/compose.md) and have the primary service.
ComposeFile read_harness_compose(std::string_view text, const std::string& path, const HarnessCompose& h,
                                 Diagnostics& diags);

}  // namespace forge::manifest
