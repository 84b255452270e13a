// The grader container's parts: tests and reward directory for the verifier, the workspace copy
// for the agent, the helper for root.
#include "trial/grader_setup.h"

#include <fcntl.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "core/strings.h"
#include "engine/archive.h"
#include "engine/tar.h"
#include "manifest/task_dir.h"
#include "stack/local_images.h"

namespace forge::trial {

namespace {

engine::TarEntry owned(std::string path, engine::EntryType type, unsigned mode, unsigned uid, unsigned gid) {
  engine::TarEntry e;
  e.path = std::move(path);
  e.type = type;
  e.mode = mode;
  e.uid = uid;
  e.gid = gid;
  return e;
}

}  // namespace

Result<std::string> tests_tar(const ConfinedDir& task, const std::string& dir, unsigned uid, unsigned gid,
                              const std::string& top) {
  engine::TarWriter tar;
  if (auto st = tar.add_entry(owned(top, engine::EntryType::kDirectory, 0700, uid, gid)); !st) return st.fail();
  auto st = task.walk(dir, manifest::kTestsLimits, [&](const TreeEntry& e) -> Status {
    const std::string path = top + "/" + e.rel;
    if (e.kind == EntryKind::kDirectory) return tar.add_entry(owned(path, engine::EntryType::kDirectory, 0700, uid, gid));
    const unsigned mode = (e.mode & 0111) ? 0700 : 0600;
    return tar.add_fd(owned(path, engine::EntryType::kFile, mode, uid, gid), e.fd);
  });
  if (!st) return st.fail_with("copying the tests '" + dir + "'");
  return tar.finish();
}

Result<std::string> verifier_logs_tar(unsigned uid, unsigned gid) {
  engine::TarWriter tar;
  const std::string logs = std::string(kVerifierLogs).substr(1);  // "logs/verifier"
  const std::string parent = logs.substr(0, logs.rfind('/'));
  if (auto st = tar.add_entry(owned(parent, engine::EntryType::kDirectory, 0755, 0, 0)); !st) return st.fail();
  if (auto st = tar.add_entry(owned(logs, engine::EntryType::kDirectory, 0700, uid, gid)); !st) return st.fail();
  return tar.finish();
}

Result<std::string> verifier_home_tar(unsigned uid, unsigned gid) {
  engine::TarWriter tar;
  const std::string home = std::string(kVerifierHome).substr(1);
  if (auto st = tar.add_entry(owned(home, engine::EntryType::kDirectory, 0700, uid, gid)); !st) return st.fail();
  return tar.finish();
}

Status copy_workspace(engine::Client& c, const std::string& runner, const std::string& workspace,
                      const std::string& grader, std::uint64_t limit, std::string_view tail) {
  std::string parent = workspace.substr(0, workspace.rfind('/'));
  if (parent.empty()) parent = "/";
  return engine::read_archive(c, runner, workspace, [&](const engine::TarSource& source) {
    return engine::write_archive(c, grader, parent, [&](const engine::TarSink& sink) {
      return engine::rewrite_tar_stream(source, sink, {kAgentUid, kAgentGid},
                                        {limit, kMaxWorkspaceEntries, "the workspace"}, tail);
    });
  });
}

Status put_workspace_tar(engine::Client& c, const std::string& workspace, const std::string& grader,
                         const std::string& tar) {
  auto entries = engine::read_tar(tar);
  if (!entries) return entries.fail();
  engine::TarWriter out;
  for (auto& e : *entries) {
    e.uid = kAgentUid;
    e.gid = kAgentGid;
    e.mode &= ~static_cast<unsigned>(06000);  // no setuid or setgid bit survives into the grader
    if (auto st = out.add_entry(e); !st) return st;
  }
  auto bytes = out.finish();
  if (!bytes) return bytes.fail();
  std::string parent = workspace.substr(0, workspace.rfind('/'));
  return engine::put_archive(c, grader, parent.empty() ? "/" : parent, std::move(*bytes));
}

Result<std::optional<double>> parse_reward(std::string_view text) {
  std::string all = trim(text);
  if (all.empty()) return std::optional<double>();
  std::string last = all.substr(all.rfind('\n') == std::string::npos ? 0 : all.rfind('\n') + 1);
  last = trim(last);
  const char* begin = last.c_str();
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(begin, &end);
  // The file's words are not quoted: the tests may have copied the agent's output into it. A
  // number out of range ("1e999" is infinite) is returned for the caller's [0, 1] check.
  if (end == begin || *end != '\0' || std::isnan(v))
    return fail(Errc::kProtocol, "its last line (" + std::to_string(last.size()) + " bytes) is not a number");
  return std::optional<double>(v);
}

}  // namespace forge::trial
