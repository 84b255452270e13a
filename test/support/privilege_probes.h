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

// `body` with $h the pid of a running forgectl-exec (its child sleeping), $c that child's.
inline std::string with_helper_running(const std::string& body) {
  return "/.forgectl/exec --timeout-ms 20000 -- sleep 20 & h=$!; "
         "for i in $(seq 50); do "
         "c=$(for p in /proc/[0-9]*; do [ \"$(cut -d' ' -f4 $p/stat 2>/dev/null)\" = $h ] && echo ${p#/proc/}; done); "
         "[ -n \"$c\" ] && break; sleep 0.1; done; "
         "[ -n \"$c\" ] || echo 'the helper never started its command'; " +
         body + "; kill $c $h 2>/dev/null";
}

// The ptrace probe's open, on the helper's dumpable child: prints "ok" under runc (gVisor refuses
// every other process's memory, dumpable or not).
inline std::string privilege_probe_control() { return with_helper_running("(exec 3</proc/$c/mem) && echo ok"); }

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
      // ptrace: opening a process's memory takes ptrace's attach check. The helper runs as the
      // agent's uid but is not dumpable, so it must stay closed (privilege_probe_control shows the
      // same open succeeding on a dumpable process under runc, so silence is the check).
      {"ptrace (the exec helper's memory)", with_helper_running("(exec 3</proc/$h/mem) 2>/dev/null && echo opened its memory")},
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
  if (runtime != "runc") return;
  engine::ExecOptions o{{"sh", "-c", privilege_probe_control()}};
  o.timeout = Millis(20000);
  auto r = engine::exec_run(*docker_env().client, container, o);
  REQUIRE(r.has_value());
  CHECK_MESSAGE(r->out == "ok\n", "the ptrace probe's control under " << runtime << " saw: " << r->out << r->err);
}

}  // namespace forge::test
