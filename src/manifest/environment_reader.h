// Reading an environment block from a YAML node; internal to the environment parser and loader.
#pragma once

#include <string>

#include "manifest/environment.h"
#include "manifest/yaml_reader.h"

namespace forge::manifest {

struct ReadEnvironment {
  EnvironmentManifest manifest;
  std::string compose_shown;  // compose_file as the user would write it from here, for messages
};

// `block` is the mapping of environment keys; `what` prefixes messages ("environment" inside
// a task.yaml, "" in a standalone manifest). Relative paths resolve against r.file()'s directory.
ReadEnvironment read_environment(YamlReader& r, const Field& block, const std::string& what);

}  // namespace forge::manifest
