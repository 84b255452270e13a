// mock-web's json-db portal for a trial with a browser (services/mock_web_portal.h): once the
// browser container runs, its address, the trial id and the trial's agent tokens go into mock-web's
// container as /srv/portal.json (outside what it serves), so the pages' JavaScript can write the
// trial's json-db state through mock-web and nothing else can (docs/services.md, "The json-db portal").
#pragma once

#include <string>

#include "core/result.h"
#include "engine/client.h"
#include "stack/up.h"

namespace forge::trial {

inline constexpr const char* kPortalFile = "/srv/portal.json";

// Writes the portal file into the stack's mock-web when the stack has both mock-web and json-db;
// does nothing otherwise. `browser` is the running browser container's id.
Status open_portal(engine::Client& c, const stack::UpResult& up, const std::string& browser,
                   const std::string& control_token, const std::string& trial_id);

}  // namespace forge::trial
