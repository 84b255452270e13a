// [environment.healthcheck]: the task's own command run in its main container after the
// environment starts and before the agent, with Harbor's (Docker's) timing rules.
#pragma once

#include <atomic>
#include <string>

#include "core/result.h"
#include "engine/client.h"
#include "manifest/harbor/harbor_task.h"

namespace forge::trial {

struct HealthReport {
  int attempts = 0;
  std::string last_output;  // the last failing check's output, cut to 2 KiB
};

// Runs `hc.command` (sh -c, as the runner's user, in its workdir) until it exits 0: every
// start_interval_sec during start_period_sec, where failures do not count, then every
// interval_sec; `retries` consecutive counted failures (a check past timeout_sec is one) end it.
// Healthy: the report. Unhealthy: kUnavailable naming the attempts and the last output (the
// trial's infra error of kind sandbox: the task's environment, never the model). Interrupted: kCancelled.
Result<HealthReport> wait_harbor_healthy(engine::Client& c, const std::string& runner,
                                         const manifest::HealthcheckConfig& hc, const std::atomic<int>* interrupted);

}  // namespace forge::trial
