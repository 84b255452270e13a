// Harbor's healthcheck in the runner, before the agent.
#include "trial/harbor_health.h"

#include <thread>

#include "core/strings.h"
#include "engine/exec.h"
#include "trial/grader_setup.h"

namespace forge::trial {

namespace {

Millis ms(double seconds) { return Millis(static_cast<long long>(seconds * 1000)); }

bool interrupted_now(const std::atomic<int>* i) { return i && i->load() > 0; }

// Sleeps `d` in short steps, so an interruption is seen within ~100 ms.
void pause(Millis d, const std::atomic<int>* interrupted) {
  auto until = Clock::now() + d;
  while (Clock::now() < until && !interrupted_now(interrupted))
    std::this_thread::sleep_for(std::min<Clock::duration>(Millis(100), until - Clock::now()));
}

}  // namespace

Result<HealthReport> wait_harbor_healthy(engine::Client& c, const std::string& runner,
                                         const manifest::HealthcheckConfig& hc, const std::atomic<int>* interrupted) {
  HealthReport rep;
  const auto started = Clock::now();
  int counted = 0;
  for (;;) {
    if (interrupted_now(interrupted)) return fail(Errc::kCancelled, "the healthcheck: interrupted");
    engine::ExecOptions o;
    o.cmd = {"sh", "-c", hc.command};
    o.timeout = ms(hc.timeout_sec);
    o.output_cap = 4096;
    o.helper = kGraderHelper;  // the runner's too: forgectl's helper volume at /.forgectl
    o.cancel = interrupted;
    ++rep.attempts;
    auto r = engine::exec_run(c, runner, o);
    if (!r) return r.fail_with("running the task's healthcheck");
    if (r->cancelled) return fail(Errc::kCancelled, "the healthcheck: interrupted");
    if (!r->timed_out && r->exit_code == 0) return rep;
    rep.last_output = r->timed_out ? "timed out after " + std::to_string(hc.timeout_sec) + " s"
                                   : "exit code " + std::to_string(r->exit_code) + ": " + trim(r->out + r->err);
    if (rep.last_output.size() > 2048) rep.last_output.resize(2048);
    const bool starting = Clock::now() - started < ms(hc.start_period_sec);
    if (!starting && ++counted >= hc.retries)
      return fail(Errc::kUnavailable, "the task's environment did not become healthy: its healthcheck failed " +
                                          std::to_string(counted) + " time(s) in a row after " +
                                          std::to_string(rep.attempts) + " attempt(s) (last: " + rep.last_output + ")");
    pause(starting ? ms(hc.start_interval_sec) : ms(hc.interval_sec), interrupted);
  }
}

}  // namespace forge::trial
