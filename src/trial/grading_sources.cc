// Grading's evidence from the workspace: its files streamed from the archive API, kept only when a
// check asks for them and only up to the caps.
#include "trial/grading_sources.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>

#include "core/strings.h"
#include "engine/archive.h"
#include "engine/tar.h"
#include "tools/workspace_path.h"

namespace forge::trial {

namespace fs = std::filesystem;

namespace {

std::string mib(std::uint64_t bytes) {
  return bytes >= (1u << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes) + " bytes";
}

}  // namespace

std::vector<std::string> path_globs(const manifest::GradingConfig& g) {
  std::vector<std::string> out;
  if (!g.state_checks.present) return out;
  for (const auto& a : g.state_checks.jsonpaths)
    if (!a.path_glob.empty() && std::find(out.begin(), out.end(), a.path_glob) == out.end()) out.push_back(a.path_glob);
  return out;
}

WorkspaceFiles::WorkspaceFiles(std::string workspace, const std::vector<grading::WorkspaceFile>& files)
    : workspace_(std::move(workspace)) {
  const std::string prefix = workspace_ + "/";
  for (const auto& f : files)
    files_[starts_with(f.path, prefix) ? f.path.substr(prefix.size()) : f.path] = f;
}

bool WorkspaceFiles::matches(const std::string& glob, const std::string& rel) const {
  std::string abs = workspace_ + "/" + rel;
  std::string legacy = std::string(tools::kLegacyWorkspace) + "/" + rel;
  return ::fnmatch(glob.c_str(), abs.c_str(), 0) == 0 || ::fnmatch(glob.c_str(), legacy.c_str(), 0) == 0 ||
         ::fnmatch(glob.c_str(), rel.c_str(), 0) == 0;
}

Status WorkspaceFiles::scan(const std::vector<std::string>& globs) {
  // Entries are named after the workspace's base name: "work/x".
  const std::string base = fs::path(workspace_).filename().string() + "/";
  std::size_t examined = 0;
  auto rel_of = [&](const std::string& path) { return starts_with(path, base) ? path.substr(base.size()) : path; };
  auto want = [&](const engine::TarHeader& h) -> engine::TarKeep {
    if (++examined > limits_.entries) {
      listing_cut_ = "the workspace holds more than " + std::to_string(limits_.entries) +
                     " entries; those after them were not examined";
      return {0, true};
    }
    if (h.type != engine::EntryType::kFile) return {};
    std::string rel = rel_of(h.path);
    if (rel.empty() || files_.count(rel)) return {};
    bool wanted = false;
    for (const auto& g : globs) wanted = wanted || matches(g, rel);
    if (!wanted) return {};
    grading::WorkspaceFile f{workspace_ + "/" + rel, {}, {}};
    if (!h.hardlink.empty()) {
      // A hard link has no data of its own: the earlier file's, when that one was kept.
      auto it = files_.find(rel_of(h.hardlink));
      if (it != files_.end())
        f.content = it->second.content, f.unread = it->second.unread;
      else
        f.unread = "a hard link to a file that was not read";
      files_[rel] = std::move(f);
      return {};
    }
    if (h.size > limits_.file_bytes) {
      f.unread = "larger than " + mib(limits_.file_bytes) + " (" + std::to_string(h.size) +
                 " bytes); forgectl reads at most " + mib(limits_.file_bytes) + " of a file";
    } else if (kept_ + h.size > limits_.kept_bytes) {
      f.unread = "not read: the files that checks read exceed " + mib(limits_.kept_bytes) + " in all";
    } else {
      kept_ += h.size;
      files_[rel] = std::move(f);
      return {static_cast<std::size_t>(h.size), false};
    }
    files_[rel] = std::move(f);
    return {};
  };
  auto got = [&](const engine::TarHeader& h, std::string data) -> Status {
    files_[rel_of(h.path)].content = std::move(data);
    return {};
  };
  auto st = engine::read_archive(*c_, runner_, workspace_, [&](const engine::TarSource& src) {
    return engine::read_tar_stream(src, want, got, {limits_.declared_bytes, 0, "the workspace"});
  });
  if (!st) return st.fail_with("reading the workspace for grading");
  for (const auto& g : globs) scanned_.insert(g);
  return {};
}

Result<std::vector<grading::WorkspaceFile>> WorkspaceFiles::match(const std::string& glob) {
  if (c_ && !scanned_.count(glob)) {
    std::vector<std::string> globs;
    if (scanned_.empty()) globs = prefetch_;
    if (std::find(globs.begin(), globs.end(), glob) == globs.end()) globs.push_back(glob);
    if (auto st = scan(globs); !st) return st.fail();
  }
  std::vector<grading::WorkspaceFile> out;
  for (const auto& [rel, f] : files_)
    if (matches(glob, rel)) out.push_back({std::string(tools::kLegacyWorkspace) + "/" + rel, f.content, f.unread});
  if (!listing_cut_.empty()) out.push_back({"", "", listing_cut_});
  return out;
}

}  // namespace forge::trial
