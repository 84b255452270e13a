// The sandbox watch of the agent phase.
#include "trial/sandbox_watch.h"

#include <condition_variable>
#include <ctime>

#include "core/strings.h"
#include "engine/containers.h"
#include "engine/system.h"
#include "policy/topology.h"

namespace forge::trial {

namespace {

std::string who_is(const std::string& key) {
  return key == policy::kRunnerKey ? "the runner" : "service '" + key + "'";
}

// The daemon's record of an API call that ended the container: `docker kill`, `docker stop`,
// `docker rm -f` (a container's own exit, crash or OOM kill records only "die"/"oom").
bool is_outside_end(const engine::Event& e) {
  return e.action == "kill" || e.action == "stop" || e.action == "destroy";
}

}  // namespace

SandboxWatch::SandboxWatch(engine::Client& c, const stack::UpResult& up, Logger* log, Millis poll)
    : c_(c), up_(up), log_(log), poll_(poll), watches_(stack::disk_watches(up)) {}

SandboxWatch::~SandboxWatch() { stop(); }

void SandboxWatch::start(std::int64_t since) {
  since_ = since - 1;  // events have 1 s resolution
  if (watches_.empty() || running_.exchange(true)) return;
  poller_ = std::thread([this] { poll_disks(); });
}

void SandboxWatch::stop() {
  running_.store(false);
  if (poller_.joinable()) poller_.join();
}

void SandboxWatch::poll_disks() {
  auto next = Clock::now();
  while (running_.load()) {
    if (Clock::now() < next) {
      std::this_thread::sleep_for(Millis(100));
      continue;
    }
    next = Clock::now() + poll_;
    for (const auto& w : watches_) {
      auto used = stack::disk_usage(c_, w.container);
      if (!used || *used <= w.limit) continue;
      {
        std::lock_guard lock(mu_);
        if (ours_.count(w.container)) continue;
        ours_.insert(w.container);
        disk_reason_ = who_is(w.key) + " wrote " + human_bytes(static_cast<std::uint64_t>(*used)) +
                       " to its filesystem, past its limit of " + human_bytes(static_cast<std::uint64_t>(w.limit)) +
                       " (disk_mb): forgectl stopped it";
      }
      if (log_) log_->warn(up_.name + ": " + disk_reason_);
      (void)engine::kill_container(c_, w.container, "SIGKILL");
    }
  }
}

bool SandboxWatch::stopped_by_us(const std::string& id) {
  std::lock_guard lock(mu_);
  return ours_.count(id) > 0;
}

SandboxVerdict SandboxWatch::verdict(bool suspect) {
  // A container killed during the last tool call may still read as running for some milliseconds.
  auto until = Clock::now() + (suspect ? Millis(2000) : Millis(0));
  for (;;) {
    SandboxVerdict v = read_verdict();
    if (v.cause != SandboxVerdict::Cause::kIntact || Clock::now() >= until) return v;
    std::this_thread::sleep_for(Millis(200));
  }
}

SandboxVerdict SandboxWatch::read_verdict() {
  using Cause = SandboxVerdict::Cause;
  // The first container found broken decides; the runner is as good as any.
  std::string broken_key, broken_id, state;
  for (const auto& [key, id] : up_.containers) {
    auto info = engine::inspect_container(c_, id);
    if (!info)
      return {Cause::kDaemon, who_is(key) + " could not be inspected after the agent phase: " + info.error().what()};
    if (stopped_by_us(id)) {
      std::lock_guard lock(mu_);
      return {Cause::kAgent, disk_reason_};
    }
    if (info->state.oom_killed)
      state = "was OOM-killed (its memory limit)";
    else if (!info->state.running)
      state = "stopped (" + info->state.status + ", exit code " + std::to_string(info->state.exit_code) + ")";
    else if (info->state.health == "unhealthy")
      state = "turned unhealthy";
    else
      continue;
    broken_key = key;
    broken_id = id;
    break;
  }
  if (broken_id.empty()) return {};
  std::string what = who_is(broken_key) + " " + state + " during the agent phase";
  // Did anything outside the trial end it? Only the daemon's events can say.
  engine::EventQuery q;
  q.filters = {{"type", {"container"}}, {"container", {broken_id}}};
  q.since = since_;
  q.until = static_cast<std::int64_t>(std::time(nullptr)) + 1;
  q.timeout = Millis(10000);
  bool outside = false;
  std::string signal;
  auto st = engine::events(c_, q, [&](const engine::Event& e) {
    if (is_outside_end(e)) {
      outside = true;
      if (auto it = e.attributes.find("signal"); it != e.attributes.end()) signal = it->second;
    }
    return true;
  });
  if (!st) return {Cause::kDaemon, what + "; the daemon's events could not be read: " + st.error().what()};
  if (outside)
    return {Cause::kOutside, what + ": the daemon recorded a kill or stop from outside the trial" +
                                 (signal.empty() ? "" : " (signal " + signal + ")")};
  return {Cause::kAgent, what + ", by the agent's own actions (nothing outside the trial stopped it)"};
}

}  // namespace forge::trial
