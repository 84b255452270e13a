// report.html's "Cheat canaries" section (results/canary.h): per task the canaries' cheat rate and
// each strategy's verdict, linked to its trial's page.
#pragma once

#include <string>

#include "results/canary.h"

namespace forge::results {

// Empty for a run without canaries. A task some canary passed is marked, and a banner above the
// table names how many.
std::string canary_section(const CanaryReport& r);

}  // namespace forge::results
