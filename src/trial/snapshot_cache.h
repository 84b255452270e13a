// The run's snapshots (snapshot.h), one per task, runner image and engine: the first trial to ask
// takes it while the others of that task wait, then each forks from it. A trial that fails before
// its snapshot is taken hands the turn to the next; a snapshot that cannot be taken (a workspace
// past kMaxSnapshotBytes, the daemon's refusal) leaves every later trial running setup itself.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/log.h"
#include "engine/client.h"

namespace forge::trial {

struct ForkState {
  std::string image_id, workspace_sha256;
  std::map<std::string, std::string> initial_files;  // the task's files as setup copied them (env.yaml)
  std::string server_state;  // a Python tool server's set-up state, seeded into each fork's ("" none)
};

class SnapshotCache {
  struct Entry {
    std::mutex taking;  // held by the trial taking the snapshot
    std::mutex mu;
    std::optional<ForkState> state;
    bool refused = false;
    engine::Client* client = nullptr;
    std::size_t index = 0;  // its image's tag
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
    void publish(ForkState s);
    void refuse();

   private:
    friend class SnapshotCache;
    Entry* e_ = nullptr;
    std::unique_lock<std::mutex> hold_;
    std::optional<ForkState> fork_;
    std::string tag_;
  };

  explicit SnapshotCache(std::string run_id) : run_id_(std::move(run_id)) {}
  SnapshotCache(const SnapshotCache&) = delete;
  SnapshotCache& operator=(const SnapshotCache&) = delete;

  const std::string& run_id() const { return run_id_; }
  // Waits while another trial takes the key's snapshot. Each engine (`c`) has snapshots of its own:
  // an image lives on the daemon that committed it.
  Lease acquire(engine::Client& c, const std::string& key);
  // Every snapshot image removed (the run's end); the errors, named.
  std::vector<std::string> remove_all();

 private:
  std::string run_id_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Entry>> entries_;
};

// "forgectl-snapshot" tags: lower-case letters, digits, '.', '-' and '_' of `run_id`, at most 100.
std::string snapshot_tag(const std::string& run_id, std::size_t n);

}  // namespace forge::trial
