// The checkout's root, from meson (test/meson.build), for test/support/paths.h.
#include "support/paths.h"

namespace forge::test {

std::string source_dir() { return FORGECTL_SOURCE_DIR; }
std::string test_data_dir() { return source_dir() + "/test/data"; }

}  // namespace forge::test
