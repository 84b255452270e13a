// Where grading's evidence comes from, all outside the agent's reach: workspace files through the
// archive API, and test scripts in a fresh grader container built from a copy of the workspace.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/host_settings.h"
#include "engine/client.h"
#include "grading/evidence.h"
#include "manifest/task_config.h"
#include "stack/labels.h"

namespace forge::trial {

// How much of the workspace grading holds in memory, whatever the agent left there.
struct WorkspaceLimits {
  std::size_t file_bytes = 8u << 20;     // content kept per matched file; a larger one is unread
  std::uint64_t kept_bytes = 64u << 20;  // content kept in all
  std::size_t entries = 200000;          // archive entries examined; the rest are not
  // Bytes the files may declare in all (the workspace's disk limit): more can only be sparse files,
  // whose whole length the archive API would stream; the scan stops there (kExceeded). 0: none.
  std::uint64_t declared_bytes = 0;
};

// The path_glob patterns of a grading config, so one pass over the workspace serves them all.
std::vector<std::string> path_globs(const manifest::GradingConfig& g);

// Regular files of the runner's workspace matching a glob, named as the agent saw them (both
// /env/fs/agent-visible/x and /work/x match). The workspace's tar is streamed from the archive
// API and only files matching `globs` (or the glob asked for, when it is not among them) are
// kept, within `limits`: a file over a cap comes back with `unread` set, never loaded.
class WorkspaceFiles {
 public:
  WorkspaceFiles(engine::Client& c, std::string runner, std::string workspace, std::vector<std::string> globs = {},
                 WorkspaceLimits limits = {})
      : c_(&c),
        runner_(std::move(runner)),
        workspace_(std::move(workspace)),
        prefetch_(std::move(globs)),
        limits_(limits) {}
  // Files already read (the local executor's sandbox), each path `workspace` + "/" + relative.
  WorkspaceFiles(std::string workspace, const std::vector<grading::WorkspaceFile>& files);
  Result<std::vector<grading::WorkspaceFile>> match(const std::string& glob);

 private:
  bool matches(const std::string& glob, const std::string& rel) const;
  Status scan(const std::vector<std::string>& globs);  // one pass keeping what any of them match

  engine::Client* c_ = nullptr;  // null: every file was given (nothing to scan)
  std::string runner_, workspace_;
  std::vector<std::string> prefetch_;
  WorkspaceLimits limits_;
  std::set<std::string> scanned_;                        // globs whose files are all in files_
  std::map<std::string, grading::WorkspaceFile> files_;  // by path relative to the workspace
  std::uint64_t kept_ = 0;
  std::string listing_cut_;  // set when a scan stopped at limits_.entries
};

struct VerifierNetwork;  // trial/verifier_network.h

struct GraderSpec {
  stack::StackLabels labels;  // the trial's stack: the grader carries its labels, so teardown removes it
  std::string runner;         // whose workspace is copied
  std::string workspace;      // "/work"
  std::string image;          // the runner's image unless the task names one
  HostSettings host;          // the helper volume the grader mounts read-only at /.forgectl
  std::string workspace_tar;  // non-empty: this workspace (the local executor's sandbox) instead of the runner's
  // The workspace's disk limit (runner.disk_mb): a copy declaring more (sparse files) is the agent's
  // doing (kExceeded), never written dense to the host's disk. 0: none.
  std::uint64_t workspace_limit = 0;
  const std::atomic<int>* cancel = nullptr;  // the run's interrupt count: a SIGINT stops the tests
  // The grader, once read, left to the trial's teardown (which removes it by the stack's labels)
  // rather than removed in the grade phase: a running one's removal is a kill and a wait.
  bool leave_to_teardown = false;
  // The network the grader joins (network_policy's grade: up_grader_network); null: none at all.
  const VerifierNetwork* network = nullptr;
};

// Copies the runner's workspace (owned by the agent's uid) and the task's tests (the verifier's
// only) into a fresh, networkless, hardened container and runs the command there as the verifier,
// the agent's programs running through the as-agent service (docs/grading.md, "custom_checks").
// Once every process in it is killed, reads the reward file — when the test exited on its own.
// `ahead`: the grader prepare_grader made for this trial (empty: one is made now).
Result<grading::TestRun> run_grader(engine::Client& c, const GraderSpec& spec, const manifest::TaskConfig& task,
                                    const std::string& ahead = "");

// The grader of the task's test scripts made ahead of the grade phase, for this one trial: created
// and started, empty: the tests go in with the agent's workspace (verifier_run.h: prepare_verifier).
Result<std::string> prepare_grader(engine::Client& c, const GraderSpec& spec, const manifest::TaskConfig& task);

// The same from a tar of the workspace (entries named "<base name of spec.workspace>/…", as the
// archive API names them), for a workspace that is in no runner: the local executor's sandbox.
Result<grading::TestRun> run_grader_on(engine::Client& c, GraderSpec spec, const manifest::TaskConfig& task,
                                       const std::string& workspace_tar);

}  // namespace forge::trial
