// Set up once, fork many (docs/sweeps.md "Forks"): a task's setup_script runs in its run's first
// trial; what it left — the workspace and json-db's namespace — is committed into a snapshot image
// from a container made for it alone (never the runner: no agent process ever ran where a snapshot
// is taken), and every later trial of the task starts from that image instead of running setup.
// Each start is proven by the SHA-256 of the workspace it begins with (workspace_hash).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/result.h"
#include "engine/client.h"
#include "engine/tar.h"
#include "manifest/task_config.h"

namespace forge::trial {

// Inside a snapshot image: the workspace as a tar of its entries (relative paths, owners and modes
// kept), the json-db init body and a Python tool server's state; nothing else differs from the
// runner's image.
inline constexpr const char* kSnapshotDir = "/.forgectl-snapshot";
// The most a snapshot carries, the workspace's tar: a larger set-up workspace is not forked.
inline constexpr std::size_t kMaxSnapshotBytes = std::size_t{256} << 20;

// Why a task's trials may not start from a snapshot although its setup_script would allow it:
// setup may have changed state the snapshot does not hold — a compose service's other than
// forgectl's json-db (captured), mock-web and rag (filled per trial from the task's files). A
// Python tool server's state is captured (read through its internal state tool, seeded into each
// fork's fresh server). Empty when they may. Every trial of such a task runs its own setup.
std::string fork_unsafe_because(const manifest::TaskConfig& task);

// The SHA-256 of a workspace as GET archive returns it (entries under its base name, which is
// dropped): over every entry sorted by path, its type, path, mode, owner, size and content's
// SHA-256 (a symlink's target). Times are left out: a copy of the same files hashes alike.
std::string workspace_hash(const std::vector<engine::TarEntry>& entries);

// initial_files as a snapshot holds them (one "<base64 path> <base64 content>" line each), and back.
std::string encode_initial_files(const std::map<std::string, std::string>& files);
Result<std::map<std::string, std::string>> decode_initial_files(std::string_view text);
// The same, read from `workspace` in the runner.
Result<std::string> hash_workspace(engine::Client& c, const std::string& runner, const std::string& workspace);

struct SnapshotSource {
  std::string runner, workspace, runner_image;
  std::string db_init_body;  // json-db's namespace as setup left it ("" with no json-db)
  std::string server_state;  // a Python tool server's state once set up ("" with none)
  std::map<std::string, std::string> initial_files;  // the task's files setup copied (env.yaml)
  std::string repo, tag;     // the image's name ("forgectl-snapshot", "<run>-<n>")
  std::map<std::string, std::string> labels;
};

struct SnapshotImage {
  std::string image_id, workspace_sha256;
};

// Reads the set-up workspace out of the runner, writes it and the json-db body into a container
// created (never started) from the runner's image, commits that and removes it.
Result<SnapshotImage> take_snapshot(engine::Client& c, const SnapshotSource& s);

// What a snapshot holds besides the workspace ("" when it holds none).
struct SnapshotState {
  std::string db_init_body, server_state;
  std::map<std::string, std::string> initial_files;
};

// A fork: the snapshot's workspace read out of a container created from `image` (labelled
// `labels`: the trial's stack owns it while it exists) and written into the runner's workspace.
// Returns the json-db init body and the Python server's state the snapshot holds.
Result<SnapshotState> fork_snapshot(engine::Client& c, const std::string& image, const std::string& runner,
                                  const std::string& workspace, const std::map<std::string, std::string>& labels);

}  // namespace forge::trial
