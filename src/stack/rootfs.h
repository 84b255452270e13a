// Assembling a FROM-scratch image's root filesystem from host files (the local images' common part).
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "engine/tar.h"

namespace forge::stack {

// The shared libraries `binary` loads, with the dynamic loader, as absolute host paths (what
// `ldd` prints after "=>", or first for the loader). A static binary has none; a library that is
// not installed is kNotFound naming it.
Result<std::vector<std::string>> shared_libraries(const std::string& binary);

// Adds host files under rootfs/ at their host paths, creating each parent directory once.
class RootfsBuilder {
 public:
  explicit RootfsBuilder(engine::TarWriter& tar) : tar_(tar) {}

  void dir(const std::string& path, unsigned mode = 0755);
  void file(const std::string& path, const std::string& host_path);
  void text(const std::string& path, std::string_view content);
  void link(const std::string& path, const std::string& target);
  // Copies the regular files below `host_dir` (symlinks followed) to `path`, sorted for stable bytes.
  void tree(const std::string& path, const std::string& host_dir);
  Status status() const;

 private:
  void parents(const std::string& path);
  engine::TarWriter& tar_;
  std::set<std::string> dirs_;
  std::vector<Status> steps_;
};

}  // namespace forge::stack
