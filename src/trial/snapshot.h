// Set up once, fork many (docs/sweeps.md "Forks"): a task's setup_script runs in its run's first
// trial; what it left — the workspace, json-db's namespace, each other compose service's
// filesystem (an image of its own) and volumes — is committed into a snapshot image
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
#include "engine/containers.h"
#include "manifest/task_config.h"
#include "stack/service_swap.h"

namespace forge::trial {

// Inside a snapshot image: the workspace as a tar of its entries (relative paths, owners and modes
// kept), the json-db init body and a Python tool server's state; nothing else differs from the
// runner's image.
inline constexpr const char* kSnapshotDir = "/.forgectl-snapshot";
// The most a snapshot carries, the workspace's tar: a larger set-up workspace is not forked.
inline constexpr std::size_t kMaxSnapshotBytes = std::size_t{256} << 20;

// Why a task's trials may not start from a snapshot although its setup_script would allow it:
// setup may have changed state a snapshot cannot hold — a tmpfs of a compose service other than
// forgectl's json-db, mock-web and rag. Such a service's filesystem and volumes are captured
// (capture_services: committed into an image, volumes read out as tars, swapped into each fork's
// stack), json-db's namespace is captured, mock-web and rag are filled per trial from the task's
// files, a Python tool server's state is captured (read through its internal state tool, seeded
// into each fork's fresh server). Empty when they may. Every trial of such a task runs its own setup.
// A service whose running container has a mount a snapshot cannot hold is found only at capture
// (uncapturable_mount): that run's trials then run setup themselves.
std::string fork_unsafe_because(const manifest::TaskConfig& task);
// json-db, mock-web, rag: forgectl's own services, whose state a snapshot carries (or a trial refills).
bool forgectl_service(const std::string& name);
// The task's other compose services, whose set-up state is captured with the snapshot.
std::vector<std::string> captured_services(const manifest::TaskConfig& task);
// Why a service's container (its mounts as inspect reports them) cannot be captured: a writable
// bind or a tmpfs mount; "" when every mount is a volume (or a read-only bind).
std::string uncapturable_mount(const std::string& service, const std::vector<engine::MountPoint>& mounts);

// A directory read out of a container as a tar of its entries relative to it (owners and modes
// kept; hard links as copies), at most `budget` bytes of file content (kExceeded past it).
struct TreeTar {
  std::string tar;
  std::size_t bytes = 0;  // file content read
};
Result<TreeTar> read_tree_tar(engine::Client& c, const std::string& container, const std::string& path,
                              std::size_t budget, const std::string& what);

// The captured services as a snapshot lists them (one "<base64 key> <base64 image> <base64
// volume target>…" line each; volumes' tars are stored beside it), and back (tars empty).
std::string encode_services(const std::vector<stack::ServiceSwap>& services);
Result<std::vector<stack::ServiceSwap>> decode_services(std::string_view text);

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
  std::vector<stack::ServiceSwap> services;  // other compose services' set-up images and volumes
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
  std::vector<stack::ServiceSwap> services;  // to swap into the fork's stack (stack::swap_services)
};

// A fork: the snapshot's workspace read out of a container created from `image` (labelled
// `labels`: the trial's stack owns it while it exists) and written into the runner's workspace.
// Returns the json-db init body, the Python server's state and the services the snapshot holds.
Result<SnapshotState> fork_snapshot(engine::Client& c, const std::string& image, const std::string& runner,
                                  const std::string& workspace, const std::map<std::string, std::string>& labels);

}  // namespace forge::trial
