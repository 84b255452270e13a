// The browser image for the docker suite's browser cases: built once per process (a no-op when its
// content key matches), only by the cases that need it, so the rest of the suite never pays for it.
#pragma once

#include <doctest/doctest.h>

#include "stack/browser_image.h"
#include "support/docker_env.h"

namespace forge::test {

inline void need_browser_image() {
  static const bool built = [] {
    auto b = stack::build_browser_image(*docker_env().client, {});
    REQUIRE_MESSAGE(b.has_value(), (b ? "" : b.error().what()));
    return true;
  }();
  (void)built;
}

}  // namespace forge::test
