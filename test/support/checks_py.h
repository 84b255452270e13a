// The lines every checks.py the docker suite writes begins with: Tolokaforge's checks interface
// imported and its init keeping the context in _ctx; the checks follow.
#pragma once

namespace forge::test {

inline constexpr const char* kChecksPyPreamble =
    R"PY(from tolokaforge.core.grading.checks_interface import CheckFailed, CheckPassed, check, init

_ctx = None


@init(interface_version="1.0")
def setup(ctx):
    global _ctx
    _ctx = ctx

)PY";

}  // namespace forge::test
