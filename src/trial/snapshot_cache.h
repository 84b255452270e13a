// The run's snapshots (snapshot.h), one per task, runner image and engine: the first trial to ask
// takes it while the others of that task wait, then each forks from it. A trial that fails before
// its snapshot is taken hands the turn to the next; a snapshot that cannot be taken (a workspace
// past kMaxSnapshotBytes, the daemon's refusal) leaves every later trial running setup itself.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/log.h"
#include "core/result.h"
#include "engine/client.h"

namespace forge::trial {

struct ForkState {
  std::string image_id, workspace_sha256;
  std::map<std::string, std::string> initial_files;  // the task's files as setup copied them (env.yaml)
  std::string server_state;  // a Python tool server's set-up state, seeded into each fork's ("" none)
  bool kept = false;         // a snapshot an earlier run kept (--keep-snapshots): initial_files is in its image
  // The compose services' set-up images this run committed beside it (removed with it; a kept
  // snapshot lists its own inside).
  std::vector<std::string> service_images;
};

// --keep-snapshots: a run's snapshots outlive it, each labelled with its content key, and a run
// forks from a kept snapshot of the same key instead of running setup (docs/sweeps.md "Forks").
struct SnapshotKeeping {
  bool keep = false;
  // SHA-256 over every file of a task directory (the sweep's task content hash).
  std::function<Result<std::string>(const std::string& task_dir)> task_hash;
};

class SnapshotCache {
  struct Entry {
    std::mutex taking;  // held by the trial taking the snapshot
    std::mutex mu;
    std::optional<ForkState> state;
    bool refused = false;
    engine::Client* client = nullptr;
    std::size_t index = 0;  // its image's tag
    std::string content_key;  // kept past the run under this key ("" : removed at its end)
    bool looked = false;      // a kept snapshot of content_key was looked for
  };

 public:
  // A trial's turn at one key: fork from `fork()`, or take the snapshot (taking()) and then
  // publish or refuse it; else (refused) run setup as without forks.
  class Lease {
   public:
    Lease() = default;
    const ForkState* fork() const { return fork_ ? &*fork_ : nullptr; }
    bool taking() const { return hold_.owns_lock(); }
    const std::string& tag() const { return tag_; }
    const std::string& content_key() const { return e_ ? e_->content_key : empty_; }
    void publish(ForkState s);
    void refuse();

   private:
    friend class SnapshotCache;
    Entry* e_ = nullptr;
    std::unique_lock<std::mutex> hold_;
    std::optional<ForkState> fork_;
    std::string tag_;
    static inline const std::string empty_;
  };

  explicit SnapshotCache(std::string run_id, SnapshotKeeping keeping = {})
      : run_id_(std::move(run_id)), keeping_(std::move(keeping)) {}
  SnapshotCache(const SnapshotCache&) = delete;
  SnapshotCache& operator=(const SnapshotCache&) = delete;

  const std::string& run_id() const { return run_id_; }
  const SnapshotKeeping& keeping() const { return keeping_; }
  // Waits while another trial takes the key's snapshot. Each engine (`c`) has snapshots of its own:
  // an image lives on the daemon that committed it. `content_key` (keeping only; "" otherwise):
  // the first to ask forks from a kept image of that key when `c` has one, else takes a snapshot
  // that is kept under it.
  Lease acquire(engine::Client& c, const std::string& key, const std::string& content_key = "");
  // Every snapshot image removed (the run's end) but kept ones; the errors, named.
  std::vector<std::string> remove_all();

 private:
  std::string run_id_;
  SnapshotKeeping keeping_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Entry>> entries_;
};

// "forgectl-snapshot" tags: lower-case letters, digits, '.', '-' and '_' of `run_id`, at most 100.
std::string snapshot_tag(const std::string& run_id, std::size_t n);

// The newest kept snapshot image of `content_key` on `c`, as a ForkState (kept); nullopt when none.
Result<std::optional<ForkState>> find_kept_snapshot(engine::Client& c, const std::string& content_key);

}  // namespace forge::trial
