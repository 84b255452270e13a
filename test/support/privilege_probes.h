// The red team's privilege probes, run as the agent inside a runner: each names the escape it
// tries and says what it saw. One list, so a runtime (runc, runsc) is a parameter, not a copy.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/exec.h"
#include "support/stack_env.h"

namespace forge::test {

struct PrivilegeProbe {
  std::string name;    // what the agent tries
  std::string script;  // sh, as the runner's user; prints what it obtained, nothing when refused
};

// Each must print nothing under every runtime.
inline const std::vector<PrivilegeProbe>& privilege_probes() {
  static const std::vector<PrivilegeProbe> probes = {
      {"capabilities", "grep -E '^CapEff:' /proc/self/status | grep -v '0000000000000000$'"},
      {"capabilities (chown)", "chown 0 /tmp 2>/dev/null && echo chowned"},
      {"mount", "mkdir -p /tmp/probe-m && mount -t tmpfs probe /tmp/probe-m 2>/dev/null && echo mounted"},
      {"mount namespace", "unshare -m true 2>/dev/null && echo unshared"},
      {"setuid to root", "su -c true root </dev/null 2>/dev/null && echo root"},
      {"docker.sock", "for s in /var/run/docker.sock /run/docker.sock; do [ -e $s ] && echo $s; done; true"},
      // no-new-privileges: under runc the kernel's line says 1; gVisor has no such line (the
      // helper's prctl check, exercised by every tool call, is what holds there).
      {"no-new-privileges", "grep -E '^NoNewPrivs:' /proc/self/status | grep -v '1$'"},
  };
  return probes;
}

// Runs every probe in `container` (as its configured user) and CHECKs that none obtained anything.
inline void check_privilege_probes(const std::string& container, const std::string& runtime) {
  for (const auto& p : privilege_probes()) {
    engine::ExecOptions o{{"sh", "-c", p.script + "; true"}};
    o.timeout = Millis(20000);
    auto r = engine::exec_run(*docker_env().client, container, o);
    REQUIRE_MESSAGE(r.has_value(), p.name << " under " << runtime << ": " << (r ? "" : r.error().what()));
    CHECK_MESSAGE(r->out.empty(), p.name << " under " << runtime << " obtained: " << r->out);
  }
}

}  // namespace forge::test
