// Task-relative paths: resolved against the task directory and confined to it.
#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/confined_dir.h"
#include "core/limits.h"
#include "core/strings.h"
#include "manifest/files.h"
#include "manifest/task_reader.h"

namespace forge::manifest {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kOwnFilesHint = "a task reads only its own files; copy what it needs into its directory";

// Every diagnostic below names the path as the task wrote it and never a byte of the file.
void report(YamlReader& r, const Field& f, const std::string& what, const Error& e) {
  bool out = e.code == Errc::kForbidden && e.message.find("outside") != std::string::npos;
  r.error(f, what + ": " + e.message, out ? std::string(kOwnFilesHint) : std::string());
}

}  // namespace

std::optional<std::string> task_path(YamlReader& r, const Field& f, const std::string& what, const std::string& dir,
                                     const std::string& rel, PathKind kind, Reach reach) {
  if (rel.empty()) {
    r.error(f, what + " is empty");
    return std::nullopt;
  }
  if (fs::path(rel).is_absolute()) {
    r.error(f, what + ": '" + rel + "' must be relative to the task directory",
            "task packs move between hosts; an absolute path would not move with them");
    return std::nullopt;
  }
  if (leaves_task(rel)) {
    if (auto p = project_path_problem(dir, rel, reach)) {
      r.error(f, what + ": " + p->message, p->hint);
      return std::nullopt;
    }
  }
  // Resolved by the kernel beneath the task directory (or its project): a symlink out of it is
  // refused, not followed.
  auto d = open_task_files(dir);
  if (!d) {
    r.error(f, what + ": " + d.error().message);
    return std::nullopt;
  }
  auto st = d->stat(rel);
  if (!st) {
    report(r, f, what, st.error());
    return std::nullopt;
  }
  if (kind == PathKind::kFile && st->kind != EntryKind::kFile) {
    r.error(f, what + ": '" + rel + "' is not a regular file");
    return std::nullopt;
  }
  if (kind == PathKind::kDirectory && st->kind != EntryKind::kDirectory) {
    r.error(f, what + ": '" + rel + "' is not a directory");
    return std::nullopt;
  }
  const std::string full = (fs::path(dir) / rel).lexically_normal().string();
  // Every file a task names is read or copied whole: each is bounded, and a directory's count too.
  const FileUsage u = file_usage(full);
  if (u.largest_bytes > limits::kMaxTaskFileBytes) {
    r.error(f, what + ": '" + u.largest + "' is larger than the " + human_bytes(limits::kMaxTaskFileBytes) +
                   " limit for one task file (" + std::to_string(u.largest_bytes) + " bytes)");
    return std::nullopt;
  }
  if (u.files > limits::kMaxTaskFiles) {
    r.error(f, what + ": '" + rel + "' holds more than " + std::to_string(limits::kMaxTaskFiles) + " files");
    return std::nullopt;
  }
  return full;
}

std::optional<std::string> read_task_file(YamlReader& r, const Field& f, const std::string& what,
                                          const std::string& dir, const std::string& rel, std::size_t max_bytes,
                                          Reach reach) {
  if (!task_path(r, f, what, dir, rel, PathKind::kFile, reach)) return std::nullopt;
  auto d = open_task_files(dir);
  auto text = d ? d->read(rel, max_bytes) : Result<std::string>(d.fail());
  if (!text) {
    report(r, f, what, text.error());
    return std::nullopt;
  }
  return std::move(*text);
}

bool check_task_tree(YamlReader& r, const Field& f, const std::string& what, const std::string& dir,
                     const std::string& rel, const TreeLimits& limits) {
  auto d = open_task_files(dir);
  Status st = d ? d->walk(rel, limits, [](const TreeEntry&) { return Status(); }) : Status(d.fail());
  if (!st) report(r, f, what, st.error());
  return st.has_value();
}

FileUsage file_usage(const std::string& path) {
  FileUsage u;
  auto count = [&](const fs::path& p, std::uintmax_t size) {
    u.bytes += size;
    ++u.files;
    if (size > u.largest_bytes || u.largest.empty()) {
      u.largest_bytes = size;
      u.largest = p.string();
    }
  };
  std::error_code ec;
  auto st = fs::symlink_status(path, ec);
  if (ec) return u;
  if (fs::is_symlink(st)) st = fs::status(path, ec);  // a named file may be a link; links below are not followed
  if (fs::is_regular_file(st)) {
    count(path, fs::file_size(path, ec));
    return u;
  }
  if (!fs::is_directory(st)) return u;
  for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
    count(it->path(), it->file_size(ec));
    if (u.files > limits::kMaxTaskFiles || u.bytes > limits::kMaxTaskBytes) break;
  }
  return u;
}

void check_task_size(YamlReader& r, const Field& root, const TaskConfig& t) {
  std::vector<std::string> paths = {t.path,
                                    t.grading.path,
                                    t.initial_state.json_db_path,
                                    t.system_prompt_file,
                                    t.environment.manifest.compose_file,
                                    t.environment.manifest.setup_script,
                                    t.initial_state.rag_corpus_dir};
  for (const auto& c : t.initial_state.filesystem_copy) paths.push_back(join_path(t.dir, c.from));
  if (!t.solution.script.empty()) paths.push_back(join_path(t.dir, t.solution.script));
  if (t.grading.custom_checks.present && !t.grading.custom_checks.dir.empty())
    paths.push_back(join_path(t.dir, t.grading.custom_checks.dir));
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  FileUsage total;
  for (const auto& p : paths) {
    if (p.empty()) continue;
    const FileUsage u = file_usage(p);
    total.bytes += u.bytes;
    if (u.largest_bytes > total.largest_bytes) {
      total.largest_bytes = u.largest_bytes;
      total.largest = u.largest;
    }
  }
  if (total.bytes > limits::kMaxTaskBytes)
    r.error(root, "the task's files add up to " + human_bytes(total.bytes) + ", more than the " +
                      human_bytes(limits::kMaxTaskBytes) + " limit for one task (the largest is '" + total.largest +
                      "', " + human_bytes(total.largest_bytes) + ")");
}

bool is_grading_asset(const std::string& rel) {
  fs::path p = fs::path(rel).lexically_normal();
  while (!p.empty() && *p.begin() == "..") p = p.lexically_relative("..");  // a project's file: from its root
  if (p.empty() || p == ".") return false;
  auto low = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
  };
  std::string name = low(p.filename().string());
  std::string first = low(p.begin()->string());
  return name == "grading.yaml" || name == "grading.yml" || first == "tests" || first.rfind("solution", 0) == 0;
}

}  // namespace forge::manifest
