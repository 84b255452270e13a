// Reads a task.yaml's `tools:` block strictly.
#pragma once

#include "manifest/tools_config.h"
#include "manifest/yaml_reader.h"

namespace forge::manifest {

// `base_dir` resolves mcp_server files; problems go to the reader's diagnostics.
ToolsConfig read_tools(YamlReader& r, const Field& block, const std::string& base_dir);

}  // namespace forge::manifest
