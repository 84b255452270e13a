// A task's browser (tools.agent.enabled lists `browser`): each trial gets a fresh Chromium in a
// hardened container of its own (forgectl/browser:local) on the trial's network, started with
// the tools and removed with the stack; preflight refuses what cannot work (docs/tools.md "browser").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "engine/client.h"
#include "engine/containers.h"
#include "manifest/task_config.h"
#include "stack/up.h"
#include "tools/browser_session.h"
#include "tools/builtin_tools.h"
#include "trial/preflight.h"

namespace forge::trial {

// Whether the task's agent may call `browser` (listed in tools.agent.enabled: a browser costs a
// container, so a task without a tools block does not get one).
bool uses_browser(const manifest::TaskConfig& task);

// tools.agent.mobile (refused, by name); `browser` on the local executor (no container to run it in).
std::vector<Problem> check_browser(const manifest::TaskConfig& task);

// The browser container's create request: nobody, no capabilities, no-new-privileges, a read-only
// root with a 256 MiB /tmp for the profile, memory and pids limits, on the runner's first network.
engine::ContainerSpec browser_container_spec(const stack::UpResult& up);

struct TrialBrowser {
  std::string container;
  std::shared_ptr<tools::BrowserSession> session;
};

// Creates and starts the trial's browser container and Chromium in it. On failure nothing is left
// but what the stack's teardown removes (the container carries the stack's labels).
Result<TrialBrowser> start_browser(engine::Client& c, const stack::UpResult& up, Deadline deadline);

// The browser tool's route: the session, the task's tools.agent.browser settings, mock-web's
// search page when the stack has mock-web.
tools::BrowserRoute browser_route(const manifest::TaskConfig& task, const stack::UpResult& up,
                                  std::shared_ptr<tools::BrowserSession> session);

}  // namespace forge::trial
