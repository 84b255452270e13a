// A Harbor task's `artifacts = [...]`: the declared paths copied out of the sandbox after the
// agent phase, into the trial directory and, for paths outside the workspace, into the fresh
// verifier's container (Harbor's separate verifier gets "only the declared artifacts").
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/result.h"
#include "engine/client.h"
#include "manifest/harbor/harbor_task.h"

namespace forge::trial {

// Every artifact together: at most this many bytes of files and this many entries; what is past
// either is left out (and said in `notes`).
inline constexpr std::uint64_t kMaxArtifactBytes = 64u << 20;
inline constexpr std::size_t kMaxArtifactEntries = 10000;

struct CollectedArtifacts {
  // "artifacts/<destination>/…" (the trial's logs/artifacts/), regular files only.
  std::string trial_tar;
  // Entries at their source paths (to unpack at "/"), owned by the agent (1000:1000), no setuid or
  // setgid bit: the artifacts outside `workspace`, for the verifier's container.
  std::string verifier_tar;
  std::vector<std::string> notes;  // a missing source, an entry left out and why
};

// Reads each artifact through the archive API of its service's container (`containers`: "main"
// and the compose services by name → container id), never following a link: symlinks, hard links
// and special files are left out, as are entries matching an `exclude` glob (against the path
// below the artifact and against the file's name). A missing source is a note, not an error.
Result<CollectedArtifacts> collect_harbor_artifacts(engine::Client& c,
                                                    const std::map<std::string, std::string>& containers,
                                                    const std::vector<manifest::Artifact>& artifacts,
                                                    const std::string& workspace);

// [[verifier.collect]]: each hook's command (sh -c) in its service's container, as its `user`
// (unset: the container's), within its timeout_sec, in order, after the agent's processes are
// killed and before the artifacts are read. A hook that fails, times out or names no service of
// the trial is a note: the artifacts are then what they are. An engine failure is an error.
Result<std::vector<std::string>> run_collect_hooks(engine::Client& c, const std::map<std::string, std::string>& containers,
                                                   const std::vector<manifest::CollectHook>& hooks,
                                                   const std::atomic<int>* interrupted);

}  // namespace forge::trial
