// Readiness waits, by polling (events would need one more connection per wait for no gain here).
#include "stack/readiness.h"

#include <thread>

#include "core/strings.h"
#include "engine/containers.h"
#include "engine/exec.h"

namespace forge::stack {

static std::string log_tail(engine::Client& c, const std::string& id) {
  auto logs = engine::container_logs(c, id, 20);
  if (!logs) return "";
  std::string all = trim(logs->out + logs->err);
  return all.empty() ? "" : "; last log lines:\n" + all;
}

static Status interrupted_now(const std::atomic<int>* flag) {
  if (flag && flag->load() > 0) return fail(Errc::kCancelled, "interrupted");
  return {};
}

Status wait_proxy_ready(engine::Client& c, const std::string& id, Deadline deadline, const std::atomic<int>* interrupted) {
  for (int i = 0;; ++i) {
    if (auto st = interrupted_now(interrupted); !st) return st;
    auto logs = engine::container_logs(c, id);
    if (!logs) return logs.fail_with("waiting for the egress proxy");
    if ((logs->err + logs->out).find("Accepting HTTP Socket connections") != std::string::npos) return {};
    if (i % 5 == 4) {
      auto info = engine::inspect_container(c, id);
      if (info && !info->state.running)
        return fail(Errc::kUnavailable, "the egress proxy exited (code " + std::to_string(info->state.exit_code) + ")" +
                                            log_tail(c, id));
    }
    if (deadline.expired()) return fail(Errc::kTimeout, "the egress proxy did not become ready in time" + log_tail(c, id));
    std::this_thread::sleep_for(Millis(20));
  }
}

// The healthcheck's test as an exec argv: CMD-SHELL through sh, CMD as given; NONE or empty: none.
static std::vector<std::string> probe_argv(const std::vector<std::string>& test) {
  if (test.size() >= 2 && test[0] == "CMD-SHELL") return {"sh", "-c", test[1]};
  if (test.size() >= 2 && test[0] == "CMD") return {test.begin() + 1, test.end()};
  return {};
}

Status wait_healthy(engine::Client& c, const std::string& id, const std::string& name, Deadline deadline,
                    const std::atomic<int>* interrupted, const std::vector<std::string>* probe, Millis probe_timeout) {
  std::vector<std::string> argv = probe ? probe_argv(*probe) : std::vector<std::string>{};
  for (;;) {
    if (auto st = interrupted_now(interrupted); !st) return st;
    auto info = engine::inspect_container(c, id);
    if (!info) return info.fail_with("waiting for service '" + name + "'");
    const auto& s = info->state;
    if (s.health == "healthy") return {};
    if (s.health == "unhealthy") return fail(Errc::kUnavailable, "service '" + name + "' is unhealthy" + log_tail(c, id));
    if (!s.running)
      return fail(Errc::kUnavailable, "service '" + name + "' exited with code " + std::to_string(s.exit_code) +
                                          " before it was healthy" + log_tail(c, id));
    if (deadline.expired())
      return fail(Errc::kTimeout, "service '" + name + "' was not healthy in time (health: " + s.health + ")" + log_tail(c, id));
    if (!argv.empty() && s.health == "starting") {
      engine::ExecOptions o{argv};
      o.timeout = probe_timeout;
      auto r = engine::exec_run(c, id, o);
      if (r && r->exit_code == 0) return {};
    }
    std::this_thread::sleep_for(Millis(100));
  }
}

}  // namespace forge::stack
