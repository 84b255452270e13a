// Putting the egress proxy's squid.conf and switching it in a running squid.
#include "stack/proxy_config.h"

#include <thread>

#include "engine/archive.h"
#include "engine/containers.h"
#include "engine/tar.h"
#include "policy/squid_conf.h"

namespace forge::stack {

namespace {

constexpr std::string_view kReady = "Accepting HTTP Socket connections";

// How many times squid has said it accepts connections: once at start, once per reconfigure.
Result<std::size_t> times_ready(engine::Client& c, const std::string& id) {
  auto logs = engine::container_logs(c, id);
  if (!logs) return logs.fail();
  std::size_t n = 0;
  for (const std::string* text : {&logs->err, &logs->out})
    for (auto at = text->find(kReady); at != std::string::npos; at = text->find(kReady, at + kReady.size())) ++n;
  return n;
}

}  // namespace

Status put_squid_conf(engine::Client& c, const std::string& id, const std::string& conf) {
  engine::TarWriter tar;
  if (auto st = tar.add_file("squid.conf", conf, 0644); !st) return st.fail();
  auto bytes = tar.finish();
  if (!bytes) return bytes.fail();
  return engine::put_archive(c, id, policy::kSquidConfDir, std::move(*bytes));
}

Status reconfigure_proxy(engine::Client& c, const std::string& id, const std::string& conf, Deadline deadline) {
  const std::string what = "switching the egress proxy's allowlist";
  auto before = times_ready(c, id);
  if (!before) return before.fail_with(what);
  if (auto st = put_squid_conf(c, id, conf); !st) return st.fail_with(what);
  if (auto st = engine::kill_container(c, id, "SIGHUP"); !st) return st.fail_with(what);
  for (int i = 0;; ++i) {
    auto now = times_ready(c, id);
    if (!now) return now.fail_with(what);
    if (*now > *before) return {};
    if (i % 10 == 9) {
      auto info = engine::inspect_container(c, id);
      if (info && !info->state.running)
        return fail(Errc::kUnavailable, what + ": squid exited (code " + std::to_string(info->state.exit_code) + ")");
    }
    if (deadline.expired()) return fail(Errc::kTimeout, what + ": squid did not say it accepts connections again");
    std::this_thread::sleep_for(Millis(20));
  }
}

}  // namespace forge::stack
