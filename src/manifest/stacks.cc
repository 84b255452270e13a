// The built-in stacks: the embedded manifests/stacks/ files, parsed like any compose file.
#include "manifest/stacks.h"

#include "core/strings.h"
#include "manifest/compose_parse.h"
#include "manifest/stacks_data.h"

namespace forge::manifest {

std::vector<std::string> builtin_stack_names() {
  std::vector<std::string> names;
  for (const auto& s : embedded_stacks()) names.emplace_back(s.name);
  names.emplace_back("none");
  return names;
}

Result<ComposeFile> builtin_stack(std::string_view name) {
  const std::string label = "builtin:" + std::string(name);
  if (name == "none") return ComposeFile{label, {}, {}};
  for (const auto& s : embedded_stacks()) {
    if (s.name != name) continue;
    // Diagnostics name the source file, should a change to it ever break the subset.
    auto file = parse_compose(s.text, "manifests/stacks/" + std::string(name) + ".yaml");
    if (!file) return file.fail_with("built-in stack '" + std::string(name) + "'");
    file->path = label;
    return file;
  }
  return fail(Errc::kNotFound,
              "no built-in stack '" + std::string(name) + "' (known: " + join(builtin_stack_names(), ", ") + ")");
}

}  // namespace forge::manifest
