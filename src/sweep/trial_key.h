// What identifies a trial across runs, so `--resume` never mistakes a changed task, image, agent or
// model for one already finished: a content hash, not a name.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "engine/images.h"
#include "manifest/run_config.h"
#include "manifest/task_config.h"
#include "trial/agent_choice.h"

namespace forge::sweep {

// SHA-256 over every file under the task directory: sorted relative paths, each with its bytes
// (symlinks by their target), so renaming, editing or adding a file changes it.
Result<std::string> task_content_hash(const std::string& task_dir);

// The agent as configured for this run: its label and, for a model, everything that shapes its
// answers (provider, name, base_url, temperature, max_tokens, seed, top_p, reasoning), for a cheat
// canary agent::kCanaryRevision, plus the
// limits that shape the episode (max_turns, timeouts), and for a Harbor task --harbor-verifier
// shared (separate, the default, adds nothing: older keys stay valid) and the run's --runtime /
// orchestrator.runtime when set. Canonical JSON.
std::string agent_fingerprint(const trial::AgentChoice& a, const manifest::RunConfig& run, const manifest::TaskConfig& task);

// How an image enters trial keys: "content:<hash>" for an image forgectl built from known content
// (its io.forgectl.content label: the same files give the same label on every host, where the
// image id also hashes the time of the build), else its id. Shards of one run on nodes that each
// built forgectl's images then agree on every key.
std::string image_key(const engine::ImageInfo& image);

// Hex SHA-256 (32 characters) of the task's content hash, the image keys its stack runs, the
// agent fingerprint and the trial index.
std::string trial_key(const std::string& task_hash, const std::vector<std::string>& image_ids,
                      const std::string& agent_fingerprint, int trial_index);

}  // namespace forge::sweep
