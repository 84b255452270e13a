// YAML values as JSON text, for what manifests carry without interpreting (tool arguments,
// expected values, schemas, opaque settings). Internal to the parsers, like yaml_reader.h.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "manifest/yaml_reader.h"

namespace forge::manifest {

// `f`'s value as compact JSON, or nullopt after a diagnostic. Quoted scalars stay strings; plain
// ones become null, true/false, integers or floats where YAML 1.1 (PyYAML, which Tolokaforge
// reads tasks with) and YAML 1.2 agree. Where they disagree (yes/no/on/off, 0x1F, 017, 1_000,
// .inf) the value is refused with a hint to quote it, rather than read differently from
// Tolokaforge. Mappings go through the reader, so duplicate keys are reported and merges work.
std::optional<std::string> yaml_to_json(YamlReader& r, const Field& f, std::string_view what);

}  // namespace forge::manifest
