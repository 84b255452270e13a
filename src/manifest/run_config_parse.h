// Strict parsing of the run config (Tolokaforge's RunConfig; docs/run-config.md).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "manifest/run_config.h"

namespace forge::manifest {

// Loads a run config file. Unknown keys at any level are errors with a did-you-mean; every
// problem is reported at once, as one kInvalid error with one "file:line:col: message" line
// each; kNotFound when the file does not exist. Relative paths (task_packs, output_dir,
// pricing_file) resolve against the file's directory, not the working directory.
Result<RunConfig> load_run_config(const std::string& path);
// The same from text; `path` names the file in messages and anchors relative paths.
Result<RunConfig> parse_run_config(std::string_view text, const std::string& path);

// The providers a model may name: openai, anthropic, openrouter, vllm, ollama, litellm,
// openai_compatible.
const std::vector<std::string>& model_providers();

}  // namespace forge::manifest
