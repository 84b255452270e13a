// The built-in stack files, embedded at build time by embed.py; internal to stacks.cc.
#pragma once

#include <span>
#include <string_view>

namespace forge::manifest {

struct EmbeddedStack {
  std::string_view name;  // "core", from manifests/stacks/core.yaml
  std::string_view text;
};

std::span<const EmbeddedStack> embedded_stacks();

}  // namespace forge::manifest
