// This checkout's paths, compiled into paths.cc alone: no other test file's compile command names
// the checkout, so the compiler cache serves their objects to another checkout of the same sources
// (CI's bare machine builds from the cache the host's build filled; scripts/build.sh).
#pragma once

#include <string>

namespace forge::test {

std::string source_dir();     // the checkout's root
std::string test_data_dir();  // test/data

}  // namespace forge::test
