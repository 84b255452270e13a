// trajectory.atif.json: a trial's transcript in Harbor's ATIF v1.7 (docs/harbor.md).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "trial/trial_result.h"

namespace forge::trial {

// trajectory.atif.json's schema_version (docs/harbor.md).
inline constexpr const char* kAtifVersion = "ATIF-v1.7";

// The document for `t`, every text through `redact`; `session_id` is the run's (its directory's name).
std::string atif_json(const TrialResult& t, const std::string& session_id,
                      const std::function<std::string(std::string_view)>& redact);

}  // namespace forge::trial
