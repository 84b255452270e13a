// Content-addressed trial identities.
#include "sweep/trial_key.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/json.h"
#include "core/sha256.h"
#include "manifest/harbor/harbor_load.h"
#include "stack/local_images.h"

namespace forge::sweep {

namespace fs = std::filesystem;

Result<std::string> task_content_hash(const std::string& task_dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(task_dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_symlink() || it->is_regular_file()) files.push_back(it->path());
  if (ec) return fail(Errc::kIo, "hashing task " + task_dir + ": " + ec.message());
  std::sort(files.begin(), files.end());
  Sha256 h;
  for (const auto& f : files) {
    std::string rel = fs::relative(f, task_dir).generic_string();
    h.update(rel);
    h.update(std::string_view("\0", 1));
    if (fs::is_symlink(f)) {
      h.update("symlink:" + fs::read_symlink(f, ec).string());
    } else {
      std::ifstream in(f, std::ios::binary);
      if (!in) return fail(Errc::kIo, "hashing task: cannot read " + f.string());
      std::string bytes((std::istreambuf_iterator<char>(in)), {});
      h.update(std::to_string(bytes.size()) + ":");
      h.update(bytes);
    }
    h.update(std::string_view("\0", 1));
  }
  return h.hex_digest();
}

std::string agent_fingerprint(const trial::AgentChoice& a, const manifest::RunConfig& run, const manifest::TaskConfig& task) {
  json::Writer w;
  w.begin_object().field("agent", a.label());
  if (a.kind == trial::AgentChoice::Kind::kReplay) w.field("replay", a.replay_path);
  // A canary's calls change with forgectl's version of them, not with anything the run says.
  if (a.kind == trial::AgentChoice::Kind::kCanary) w.field("canary_revision", agent::kCanaryRevision);
  if (a.kind == trial::AgentChoice::Kind::kLlm) {
    if (auto it = run.models.find(a.model_key); it != run.models.end()) {
      const auto& m = it->second;
      w.key("model").begin_object().field("provider", m.provider).field("name", m.name).field("base_url", m.base_url);
      w.key("temperature").num(m.temperature).field("reasoning", m.reasoning);
      if (m.max_tokens) w.field("max_tokens", *m.max_tokens);
      if (m.seed) w.field("seed", *m.seed);
      if (m.top_p) w.key("top_p").num(*m.top_p);
      w.end_object();
    }
  }
  // Harbor's shared verifier judges differently from the separate one: a trial of one is not the other's.
  if (task.harbor && manifest::shared_verifier_applies(*task.harbor) && run.harbor_shared_verifier)
    w.field("harbor_verifier", "shared");
  // A runsc result is not a runc result. A task's own runtime: is in its content hash already;
  // auto adds nothing, so older keys stay valid.
  if (!run.runtime.empty()) w.field("runtime", run.runtime);
  w.field("max_turns", task.max_turns.value_or(run.max_turns))
      .field("episode_timeout_ms", static_cast<std::int64_t>(run.episode_timeout.count()))
      .field("turn_timeout_ms", static_cast<std::int64_t>(run.turn_timeout.count()));
  return w.end_object().take();
}

std::string image_key(const engine::ImageInfo& image) {
  auto content = image.labels.find(stack::kContentLabel);
  if (content != image.labels.end() && !content->second.empty()) return "content:" + content->second;
  return image.id;
}

std::string trial_key(const std::string& task_hash, const std::vector<std::string>& image_ids,
                      const std::string& fingerprint, int trial_index) {
  Sha256 h;
  h.update(task_hash);
  for (const auto& id : image_ids) {
    h.update("\x1f");
    h.update(id);
  }
  h.update("\x1e");
  h.update(fingerprint);
  h.update("\x1e" + std::to_string(trial_index));
  return h.hex_digest().substr(0, 32);
}

}  // namespace forge::sweep
