// Image endpoints: build from a tar context, inspect, list, tag, remove, load, and pinned pull.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/client.h"
#include "engine/containers.h"

namespace forge::engine {

struct BuildSpec {
  std::string context_tar;              // the build context, a tar (see engine/tar.h)
  std::vector<std::string> tags;        // "forgectl/runner:0.1"
  std::string dockerfile = "Dockerfile";
  std::map<std::string, std::string> labels, build_args;
  // RUN steps get no network: a build must not reach outside the machine.
  std::string network_mode = "none";
  bool no_cache = false;
  Millis timeout{600000};
  // Limits on the build's RUN containers (the /build endpoint's memory, memswap, cpuperiod,
  // cpuquota and ulimits parameters); 0 or empty: the daemon's default, none.
  std::int64_t memory = 0, memswap = 0;        // bytes; memswap equal to memory: no swap
  std::int64_t cpu_period = 0, cpu_quota = 0;  // microseconds: quota/period CPUs
  std::vector<Ulimit> ulimits;                 // e.g. {nproc, 4096, 4096}
};
// The query `build_image` sends (from "/build?"), for request-shape tests.
std::string build_query(const BuildSpec& spec);
// Builds and returns the image id ("sha256:…"). Build output lines go to `progress` (may be empty).
// The daemon reports build failures inside a 200 stream; they come back as errors here.
Result<std::string> build_image(Client& c, const BuildSpec& spec,
                                const std::function<void(std::string_view)>& progress = {});

struct ImageInfo {
  std::string id;
  std::vector<std::string> repo_tags, repo_digests;
  std::map<std::string, std::string> labels;
  std::int64_t size = 0;
  std::string created;  // inspect: RFC 3339; list: unix seconds, in decimal
  std::string working_dir, user;  // Config.WorkingDir and Config.User (inspect only)
};
Result<ImageInfo> inspect_image(Client& c, std::string_view name);
Result<std::vector<ImageInfo>> list_images(Client& c, const Filters& filters = {});
Status tag_image(Client& c, std::string_view source, std::string_view repo, std::string_view tag);
// Removes a tag (and the image when it was the last one); a missing image is kNotFound.
Status remove_image(Client& c, std::string_view name, bool force = false);
// POST /commit: a container's filesystem (never its volumes or tmpfs mounts) as a new image,
// without pausing it (the caller commits only a container that runs nothing). `labels` are merged
// with the container's own (Docker's rule: a label the container has stays on the image).
struct CommitSpec {
  std::string container, repo, tag, comment;
  std::map<std::string, std::string> labels;
};
// The query commit_container sends (from "/commit?"), for request-shape tests.
std::string commit_query(const CommitSpec& spec);
// Returns the new image's id ("sha256:…").
Result<std::string> commit_container(Client& c, const CommitSpec& spec);
// Exports images as one `docker save` tar.
Result<std::string> save_images(Client& c, const std::vector<std::string>& names);
// Loads a `docker save` tar; returns the names the daemon reported ("Loaded image: x:y").
Result<std::vector<std::string>> load_images(Client& c, std::string tar);
// Pulls `repo@sha256:<64 hex>` and nothing else: a moving tag is refused. With no registry
// reachable this fails cleanly (kUnavailable) and nothing else happens.
Result<std::string> pull_image_by_digest(Client& c, std::string_view reference, Millis timeout = Millis(600000));
// Splits "repo@sha256:…" into repo and digest; an error naming what is wrong otherwise.
Result<std::pair<std::string, std::string>> parse_digest_reference(std::string_view reference);

// Parses a JSON-lines progress stream (build, load, pull): collects aux IDs and stream text, and
// turns an "error"/"errorDetail" line into an error.
class ProgressParser {
 public:
  explicit ProgressParser(std::function<void(std::string_view)> on_text = {}) : on_text_(std::move(on_text)) {}
  Status feed(std::string_view bytes);
  Status finish();  // the last line may lack a newline
  const std::string& aux_id() const { return aux_id_; }
  const std::string& error() const { return error_; }
  const std::vector<std::string>& texts() const { return texts_; }

 private:
  Status line(std::string_view l);
  std::function<void(std::string_view)> on_text_;
  std::string pending_, aux_id_, error_;
  std::vector<std::string> texts_;
};

}  // namespace forge::engine
