// Reading the run config's `models:` block; internal to run_config_parse.cc and its neighbour.
#pragma once

#include <map>
#include <string>

#include "manifest/run_config.h"
#include "manifest/yaml_reader.h"

namespace forge::manifest {

std::map<std::string, ModelConfig> read_models(YamlReader& r, const Field& block);

// Inline keys are refused wherever they appear: a config file is shared and committed.
void refuse_api_key(YamlReader& r, const Field& key, const std::string& what);

}  // namespace forge::manifest
