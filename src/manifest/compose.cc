// ComposeFile lookups.
#include "manifest/compose.h"

namespace forge::manifest {

const ComposeService* ComposeFile::find(std::string_view name) const {
  for (const auto& s : services) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace forge::manifest
