// Sandbox over a runner container: every operation is one request to forgectl's helper inside
// it, so file access works on read-only roots and tmpfs workspaces where the archive API cannot.
#pragma once

#include <string>

#include "engine/client.h"
#include "tools/helper_channel.h"
#include "tools/sandbox.h"

namespace forge::tools {

class ContainerSandbox final : public Sandbox {
 public:
  // File operations that take longer than this fail with kTimeout (and the helper is restarted).
  static constexpr Millis kFileOpTimeout{60000};

  // `spec.container` must be running and hold the helper at `spec.helper`.
  ContainerSandbox(engine::Client& client, HelperChannelSpec spec);

  std::string describe() const override;
  std::string workspace() const override { return channel_.spec().workspace; }
  Result<RunResult> run(const RunRequest& req) override;
  Result<FileChunk> read_file(const std::string& rel, std::int64_t offset, std::int64_t limit) override;
  Status write_file(const std::string& rel, std::string_view data, bool append) override;
  Result<std::vector<DirEntry>> list_dir(const std::string& rel) override;
  Result<DirEntry> stat(const std::string& rel) override;
  Status move(const std::string& from_rel, const std::string& to_rel) override;
  Status copy(const std::string& from_rel, const std::string& to_rel) override;
  Status remove(const std::string& rel, bool recursive) override;
  Result<std::vector<GrepMatch>> grep(const std::string& rel, const std::string& pattern, int max_matches) override;

  HelperChannel& channel() { return channel_; }

 private:
  Result<json::Document> file_call(const std::string& body, const std::string& doing);

  HelperChannel channel_;
};

}  // namespace forge::tools
