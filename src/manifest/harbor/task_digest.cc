// Harbor's content digest of a task directory, as a dataset.toml pins it (dataset_manifest.h).
#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <utility>
#include <vector>

#include "core/sha256.h"
#include "manifest/files.h"
#include "manifest/harbor/dataset_manifest.h"

namespace forge::manifest {

namespace fs = std::filesystem;

namespace {

constexpr std::array<const char*, 4> kSingleFiles = {"task.toml", "instruction.md", "README.md", "trajectory.json"};
constexpr std::array<const char*, 4> kDirectories = {"environment", "tests", "solution", "steps"};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Editor and interpreter droppings Harbor leaves out of a package.
bool ignored(const std::string& name) {
  return name == "__pycache__" || name == ".DS_Store" || ends_with(name, ".pyc") || ends_with(name, ".swp") ||
         ends_with(name, ".swo") || ends_with(name, "~");
}

Result<std::string> file_sha256(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(Errc::kIo, "cannot read '" + path.string() + "'");
  Sha256 h;
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h.update(std::string_view(buf.data(), static_cast<std::size_t>(in.gcount())));
  }
  if (in.bad()) return fail(Errc::kIo, "cannot read '" + path.string() + "'");
  return h.hex_digest();
}

// The files a digest covers, as (relative path, absolute path), with the bounds checked.
class Collector {
 public:
  explicit Collector(const fs::path& root) : root_(root) {}

  Result<void> add(const fs::path& path) {
    std::error_code ec;
    const auto link = fs::symlink_status(path, ec);
    if (ec) return fail(Errc::kIo, "cannot read '" + path.string() + "': " + ec.message());
    if (fs::is_symlink(link)) {
      if (!is_inside(path, root_))
        return fail(Errc::kInvalid, "'" + path.string() + "' is a symlink that leads outside the task");
      if (fs::is_directory(path, ec))
        return fail(Errc::kInvalid, "'" + path.string() + "' is a symlink to a directory, which a digest cannot cover");
    }
    if (!fs::is_regular_file(path, ec)) return {};  // sockets, fifos: no content to hash
    if (files_.size() >= kMaxDigestFiles)
      return fail(Errc::kInvalid, "'" + root_.string() + "' has more than " + std::to_string(kMaxDigestFiles) +
                                      " files to digest");
    bytes_ += fs::file_size(path, ec);
    if (bytes_ > kMaxDigestBytes)
      return fail(Errc::kInvalid, "'" + root_.string() + "' holds more than " + std::to_string(kMaxDigestBytes >> 30) +
                                      " GiB to digest");
    files_.emplace_back(path.lexically_relative(root_).generic_string(), path);
    return {};
  }

  Result<void> add_tree(const fs::path& dir) {
    std::error_code ec;
    auto it = fs::recursive_directory_iterator(dir, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ignored(it->path().filename().string())) {
        if (it->is_directory(ec) && !it->is_symlink(ec)) it.disable_recursion_pending();
        continue;
      }
      if (it->is_directory(ec) && !it->is_symlink(ec)) continue;
      if (auto r = add(it->path()); !r) return r;
    }
    if (ec) return fail(Errc::kIo, "cannot list '" + dir.string() + "': " + ec.message());
    return {};
  }

  std::vector<std::pair<std::string, fs::path>>& files() { return files_; }

 private:
  fs::path root_;
  std::vector<std::pair<std::string, fs::path>> files_;
  std::uintmax_t bytes_ = 0;
};

}  // namespace

Result<std::string> harbor_task_digest(const std::string& task_dir) {
  const fs::path root = fs::path(task_dir).lexically_normal();
  Collector c(root);
  for (const char* name : kSingleFiles)
    if (file_kind(root / name) != FileKind::kMissing)
      if (auto r = c.add(root / name); !r) return r.fail();
  for (const char* name : kDirectories) {
    const fs::path dir = root / name;
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(dir, ec)))
      return fail(Errc::kInvalid, "'" + dir.string() + "' is a symlink to a directory, which a digest cannot cover");
    if (file_kind(dir) == FileKind::kDirectory)
      if (auto r = c.add_tree(dir); !r) return r.fail();
  }
  auto& files = c.files();
  std::sort(files.begin(), files.end());
  Sha256 all;
  for (const auto& [rel, path] : files) {
    auto h = file_sha256(path);
    if (!h) return h.fail();
    all.update(rel);
    all.update(std::string_view("\0", 1));
    all.update(*h);
    all.update("\n");
  }
  return "sha256:" + all.hex_digest();
}

}  // namespace forge::manifest
