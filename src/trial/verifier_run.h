// The grader container in general: a fresh container of the task's image with the workspace copy
// as the agent's, the tests and the reward directory as the verifier's, the tests run as the
// verifier with the agent's programs behind the as-agent service, and files read only after every
// process in it is dead. run_grader (custom_checks) and the Harbor verifier both go through it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/client.h"
#include "grading/evidence.h"
#include "trial/grader_setup.h"
#include "trial/grading_sources.h"

namespace forge::trial {

// Who the tests run as: forgectl's verifier (2000:2000) unless a task names another uid, never
// root and never the agent's uid (grader_setup.h).
struct VerifierIdentity {
  unsigned uid = kVerifierUid, gid = kVerifierGid;
  std::string user() const { return std::to_string(uid) + ":" + std::to_string(gid); }
};

struct VerifierRun {
  GraderSpec where;  // the stack, the runner whose workspace is copied, the image, the run id
  // Tars unpacked at "/" before the start: the tests (the verifier's, tests_tar()), and paths the
  // agent left outside the workspace (declared artifacts), whose entries must be the agent's.
  std::vector<std::string> verifier_tars, agent_tars;
  std::string command;  // sh -c, started in the workspace copy
  double timeout_s = 600;
  std::vector<std::string> env;  // "K=V" for the tests, besides FORGECTL_AS_AGENT
  VerifierIdentity as;
  // A network the grader joins (a Docker network's name, with the aliases' proxy variables in
  // `env` when it reaches out through the egress proxy); empty: none at all.
  std::string network;
  std::vector<std::string> dns_options;
  std::vector<std::string> dns;  // the verifier network's resolver (policy::ContainerPlan::dns)
  // The container's limits (a Harbor task's [verifier.environment]): memory in bytes, also the
  // swap limit (no swap); CPUs in billionths, capped at the host's. 0: 2 GiB, no CPU cap.
  std::int64_t memory = 0, nano_cpus = 0;
  // Files under /logs/verifier read after the kill, when the tests ended on their own.
  std::vector<std::string> read_files;
  bool collect_logs = false;  // a tar of /logs/verifier (the verifier's own logs), after the kill
  // One read_file at most, read by one exec that first kills every other process of the grader
  // (the as-agent service, then the verifier's and the agent's uids) rather than by stopping the
  // container and a GET archive: no oom_killed then (no collect_logs either).
  bool read_in_place = false;
  std::size_t max_file_bytes = 64 * 1024;
};

struct VerifierResult {
  grading::TestRun run;
  bool ended_on_its_own = false;  // not timed out, not killed by a signal
  bool oom_killed = false;        // the kernel's OOM killer ended a process of the grader (its memory limit)
  // read_files: nullopt when the file is missing; absent when it was not read.
  std::map<std::string, std::optional<std::string>> files;
  // read_files that exist but are no regular file of at most max_file_bytes (a directory, a link,
  // a fifo, too large): the reason, in place of an entry in `files`.
  std::map<std::string, std::string> unreadable;
  std::string logs_tar;  // collect_logs: /logs/verifier's entries ("verifier/…"); may be empty
};

// Creates, fills and starts the grader, checks the as-agent service, runs the tests as `as`
// under the helper's deadline, kills the container, then reads what was asked. A file to read
// that exists but is not a regular file, or is larger than max_file_bytes, is in `unreadable`.
// `ahead`: the grader prepare_verifier made for this trial, which then gets only the agent's
// files; it is removed at the end all the same (at once, for a fresh one, when `v` has agent_tars).
Result<VerifierResult> run_verifier(engine::Client& c, const VerifierRun& v, const std::string& ahead = "");

// The grader of `v` made ahead of the trial's grade phase, like the warm pool's sandboxes: created
// empty, started, its as-agent service up; its id. Nothing of the agent's (nor the verifier's
// files) is in it until run_verifier copies this trial's workspace in, the verifier's files last.
Result<std::string> prepare_verifier(engine::Client& c, const VerifierRun& v);

// The regular files under `path` of container `id` (running or stopped) as a tar of plain 0644
// files named after the path's base name ("verifier/…"), at most `max_bytes` of content (files
// past it are left out); empty when the path is missing. Links, devices and the like are skipped.
Result<std::string> collect_tree(engine::Client& c, const std::string& id, const std::string& path,
                                 std::uint64_t max_bytes = 16u << 20);

}  // namespace forge::trial
