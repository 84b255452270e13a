// The whole-filesystem scan the docker suite runs in a trial's containers to show that a secret
// (a grading asset's marker, a control token) is in no file: every file outside the kernel's
// filesystems (/proc, /sys, /dev) is grepped for it, as root, within one bound.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "engine/containers.h"
#include "engine/exec.h"
#include "support/docker_env.h"

namespace forge::test {

// A whole-filesystem grep took over 20 s beside the other docker shard on 2 cores: a generous
// bound, and a scan that exceeds it fails as such instead of passing as one that found nothing.
inline constexpr Millis kFsScanTimeout{120000};

// The scan over the needle in $N: one "HIT:path" line per file holding it, then SCAN-DONE.
inline std::string fs_scan_script() {
  return "for d in /*; do case $d in /proc|/sys|/dev) ;; *) grep -rl \"$N\" \"$d\" 2>/dev/null | "
         "while read f; do echo \"HIT:$f\"; done;; esac; done; echo SCAN-DONE";
}

// The scan for the needle `head` + `tail`, assembled by the shell, so that a command line that
// travels where the needle must not be (a tool call, the trial's logs) does not hold it whole.
inline std::string fs_scan_command(const std::string& head, const std::string& tail) {
  return "N=" + head + "; N=${N}" + tail + "; " + fs_scan_script();
}

// Runs the scan in container `id` as root, the needle in the exec's environment (in no command
// line and no file); REQUIREs that it ran and finished within kFsScanTimeout. Returns its output.
inline std::string scan_container(const std::string& id, const std::string& needle) {
  engine::ExecOptions o{{"sh", "-c", fs_scan_script()}};
  o.env = {"N=" + needle};
  o.user = "0:0";
  o.timeout = kFsScanTimeout;
  auto r = engine::exec_run(*docker_env().client, id, o);
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  REQUIRE_MESSAGE(!r->timed_out, "the filesystem scan of " << id << " timed out after " << r->elapsed.count() << " ms");
  return r->out;
}

// The scan of each container: (its name, the scan's output).
inline std::vector<std::pair<std::string, std::string>> scan_containers(
    const std::vector<engine::ContainerSummary>& containers, const std::string& needle) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& c : containers) out.emplace_back(c.names.empty() ? c.id : c.names[0], scan_container(c.id, needle));
  return out;
}

// The scan of container `name` ran to its end and found nothing.
inline void check_scan_clean(const std::string& name, const std::string& output) {
  CAPTURE(name);
  CAPTURE(output);
  CHECK(output.find("SCAN-DONE") != std::string::npos);
  CHECK(output.find("HIT:") == std::string::npos);
}

}  // namespace forge::test
