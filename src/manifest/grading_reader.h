// Readers for the blocks of a grading.yaml; internal to grading_parse.cc and its neighbours.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "manifest/grading_config.h"
#include "manifest/yaml_reader.h"

namespace forge::manifest {

StateChecks read_state_checks(YamlReader& r, const Field& block);
TranscriptRules read_transcript_rules(YamlReader& r, const Field& block);
LlmJudge read_llm_judge(YamlReader& r, const Field& block);
// `dir` is the task directory; a `weight` here is returned for the combine step.
// forgectl's own egress rules (grading_egress.cc).
EgressRules read_egress(YamlReader& r, const Field& block);
TestScripts read_custom_checks(YamlReader& r, const Field& block, const std::string& dir,
                               std::optional<std::pair<double, Field>>& weight);

}  // namespace forge::manifest
