// The host's limits against the trials' needs.
#include "sweep/host_fit.h"

#include <algorithm>

namespace forge::sweep {

namespace {

constexpr std::uint64_t kMany = 1u << 20;

std::uint64_t room_after(std::uint64_t room, std::uint64_t used) { return room > used ? room - used : 0; }

}  // namespace

Result<HostFit> fit_to_host(int wanted, int pool_wanted, const HostLimits& host, const TrialNeeds& need) {
  HostFit fit;
  auto allowed = static_cast<std::uint64_t>(std::max(1, wanted));
  // How many sandboxes (running or held ahead) each limit fits.
  std::uint64_t by_fds = kMany, by_mem = kMany, by_subnets = kMany;
  auto lower = [&](std::uint64_t fits, const std::string& limit, const std::string& what) -> Status {
    if (fits == 0) return fail(Errc::kUnavailable, limit + " fits no trial at all (" + what + "); refusing to start");
    if (fits >= allowed) return {};
    fit.messages.push_back(limit + " fits " + std::to_string(fits) + " trial(s) at once (" + what +
                           "); concurrency lowered from " + std::to_string(allowed) + " to " + std::to_string(fits));
    allowed = fits;
    return {};
  };

  if (host.subnet_trials) {
    by_subnets = *host.subnet_trials;
    if (auto st = lower(
            by_subnets, host.subnet_note.empty() ? "the subnet pool" : host.subnet_note,
            "free /28 subnets; forgectl down --orphans frees stale ones, FORGECTL_SUBNET_POOL sets a larger range");
        !st)
      return st.fail();
  }
  if (host.nofile) {
    std::uint64_t per = static_cast<std::uint64_t>(std::max(1, need.fds));
    by_fds = room_after(*host.nofile, static_cast<std::uint64_t>(std::max(0, need.fds_base))) / per;
    if (auto st = lower(by_fds, "RLIMIT_NOFILE " + std::to_string(*host.nofile),
                        "about " + std::to_string(per) + " file descriptors a trial; raise it with ulimit -n");
        !st)
      return st.fail();
  }
  if (host.mem_available_mib) {
    std::uint64_t per = std::max<std::uint64_t>(1, need.rest_mib);
    by_mem = *host.mem_available_mib * 8 / 10 / per;  // 80 %: the host and the daemon keep the rest
    if (auto st = lower(by_mem, "MemAvailable " + std::to_string(*host.mem_available_mib) + " MiB",
                        "about " + std::to_string(per) + " MiB a trial's sandbox at rest, within 80 %");
        !st)
      return st.fail();
    // The limits only warn: a runner limited to 2 GiB rests at a few MiB.
    if (need.limit_mib > 0 && allowed * need.limit_mib > *host.mem_available_mib)
      fit.messages.push_back(
          "warning: " + std::to_string(allowed) + " trial(s) at once may use up to " +
          std::to_string(allowed * need.limit_mib) + " MiB (their memory limits), more than the " +
          std::to_string(*host.mem_available_mib) +
          " MiB available; trials that use much of their limit may be OOM-killed (lower --concurrency)");
  }
  fit.concurrency = static_cast<int>(std::min<std::uint64_t>(allowed, kMany));

  // The pool: what is left of every limit after the trials in flight.
  if (pool_wanted != 0) {
    std::uint64_t cap = pool_wanted < 0 ? allowed : static_cast<std::uint64_t>(pool_wanted);
    for (std::uint64_t limit : {by_fds, by_mem, by_subnets}) cap = std::min(cap, room_after(limit, allowed));
    fit.pool = static_cast<int>(std::min<std::uint64_t>(cap, 1u << 16));
  }
  return fit;
}

}  // namespace forge::sweep
