// The compose subset forgectl reads itself (docs/compose.md): value types, parsed in compose_parse.cc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"

namespace forge::manifest {

struct SourceLocation {
  std::string file;
  int line = 0, column = 0;
};

struct ComposeBuild {
  std::string context;  // absolute, resolved against the compose file's directory
  std::string dockerfile = "Dockerfile";
  std::map<std::string, std::string> args;
  // Context-relative paths left out of the context sent to the builder, so no COPY can put them
  // in the image (a Terminal-Bench 1 task's tests and solution, whose context is the task).
  std::vector<std::string> exclude;
};

struct ComposeHealthcheck {
  std::vector<std::string> test;  // {"CMD", …} | {"CMD-SHELL", "…"}; a string form becomes CMD-SHELL
  Millis interval{0}, timeout{0}, start_period{0};  // 0 = Docker's default
  int retries = 0;
  bool disable = false;
};

enum class DependCondition { kStarted, kHealthy };

struct ComposeService {
  std::string name;
  SourceLocation where;
  std::string image;                   // empty when only `build` is given
  std::optional<ComposeBuild> build;
  std::optional<std::vector<std::string>> command, entrypoint;  // string forms are shell-split
  std::vector<std::string> environment;  // "K=V", env_file entries first, `environment` overriding
  std::string working_dir, user;
  std::optional<ComposeHealthcheck> healthcheck;
  std::map<std::string, DependCondition> depends_on;
  // network name → aliases. Empty map: the file's default network.
  std::map<std::string, std::vector<std::string>> networks;
  std::map<std::string, std::string> tmpfs;  // mount point → options ("" = defaults)
  bool read_only = false;
  std::vector<std::string> cap_add, cap_drop;
  std::int64_t mem_limit = 0;  // bytes
  double cpus = 0;
  std::int64_t pids_limit = 0;
  std::map<std::string, std::string> labels;
  std::vector<std::string> expose;  // "8080" or "8080/tcp"
  // `x-forgectl: {upstream: true}`: a test-only stand-in for an internet host under
  // limited_internet. It sits on a network of its own with the egress proxy (never the task
  // network, never the internet), so the runner reaches it only through the proxy and only when
  // one of its names is on the allowlist (docs/compose.md, "Upstreams").
  bool upstream = false;
};

struct ComposeNetwork {
  std::string name;
  SourceLocation where;
  bool internal = false;  // forgectl makes every task network internal under no/limited internet anyway
};

struct ComposeFile {
  std::string path;                     // absolute
  std::vector<ComposeService> services;  // in file order
  std::map<std::string, ComposeNetwork> networks;
  const ComposeService* find(std::string_view name) const;
};

}  // namespace forge::manifest
