// Harbor's declared artifacts: copied out of the containers after the agent, links never followed.
#include "trial/harbor_artifacts.h"

#include <fnmatch.h>

#include <filesystem>

#include "engine/archive.h"
#include "engine/exec.h"
#include "engine/tar.h"
#include "trial/grader_setup.h"

namespace forge::trial {

namespace {

namespace fs = std::filesystem;

bool excluded(const manifest::Artifact& a, const std::string& rel) {
  const std::string name = fs::path(rel).filename().string();
  for (const auto& pat : a.exclude)
    if (fnmatch(pat.c_str(), rel.c_str(), FNM_PATHNAME) == 0 || fnmatch(pat.c_str(), name.c_str(), 0) == 0) return true;
  return false;
}

// `p` relative and without "." or ".." components (the archive's names come from the container).
bool clean_relative(const std::string& p) {
  if (p.empty() || p.front() == '/') return false;
  for (const auto& part : fs::path(p))
    if (part == ".." || part == ".") return false;
  return true;
}

bool inside(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

}  // namespace

Result<CollectedArtifacts> collect_harbor_artifacts(engine::Client& c,
                                                    const std::map<std::string, std::string>& containers,
                                                    const std::vector<manifest::Artifact>& artifacts,
                                                    const std::string& workspace) {
  CollectedArtifacts out;
  engine::TarWriter trial, verifier;
  std::uint64_t bytes = 0;
  std::size_t entries = 0;
  bool any_trial = false, any_verifier = false;
  for (const auto& a : artifacts) {
    const std::string service = a.service.empty() ? "main" : a.service;
    auto it = containers.find(service);
    if (it == containers.end()) {
      out.notes.push_back(a.source + ": no service '" + service + "' in the trial");
      continue;
    }
    std::string source = fs::path(a.source).lexically_normal().generic_string();
    if (source.size() > 1 && source.back() == '/') source.pop_back();
    if (source.empty() || source.front() != '/')
      source = fs::path(workspace).append(source).lexically_normal().generic_string();
    std::string dest = a.destination.empty() ? source.substr(1) : a.destination;
    const std::string parent = fs::path(source).parent_path().generic_string();
    // The loader refuses a source on the verifier's reserved paths; should one come here anyway,
    // it stays out of the verifier's container (it could plant the reward or break the tests).
    const bool reserved = !manifest::reserved_verifier_path(source).empty();
    if (reserved && service == "main")
      out.notes.push_back(a.source + ": on the verifier's reserved paths: not put into the verifier's container");
    const bool to_verifier = service == "main" && !inside(source, workspace) && !reserved;
    Status skipped;
    auto st = engine::read_archive(c, it->second, source, [&](const engine::TarSource& src) -> Status {
      auto want = [&](const engine::TarHeader& h) -> engine::TarKeep {
        if (!clean_relative(h.path)) return {0, false};
        const auto slash = h.path.find('/');
        const std::string rest = slash == std::string::npos ? std::string() : h.path.substr(slash + 1);
        if (!rest.empty() && excluded(a, rest)) return {0, false};
        if (h.type == engine::EntryType::kDirectory) {
          if (to_verifier && entries < kMaxArtifactEntries) {
            ++entries;
            engine::TarEntry d;
            d.path = (parent == "/" ? "" : parent.substr(1) + "/") + h.path;
            d.type = engine::EntryType::kDirectory;
            d.mode = h.mode & 0777;
            d.uid = kAgentUid, d.gid = kAgentGid;
            if (auto s = verifier.add_entry(d); !s) skipped = s;
            any_verifier = true;
          }
          return {0, false};
        }
        if (h.type != engine::EntryType::kFile || !h.hardlink.empty()) {
          out.notes.push_back(a.source + ": " + h.path + " is not a regular file: left out");
          return {0, false};
        }
        if (entries >= kMaxArtifactEntries || bytes + h.size > kMaxArtifactBytes) {
          out.notes.push_back(a.source + ": " + h.path + " is past the artifacts' limit (" +
                              std::to_string(kMaxArtifactEntries) + " entries, " +
                              std::to_string(kMaxArtifactBytes >> 20) + " MiB): left out");
          return {0, false};
        }
        ++entries;
        bytes += h.size;
        return {static_cast<std::size_t>(h.size) + 1, false};  // + 1: empty files too
      };
      auto got = [&](const engine::TarHeader& h, std::string data) -> Status {
        const auto slash = h.path.find('/');
        const std::string rest = slash == std::string::npos ? std::string() : h.path.substr(slash + 1);
        const std::string to = "artifacts/" + dest + (rest.empty() ? "" : "/" + rest);
        if (clean_relative(to)) {
          if (auto s = trial.add_file(to, data, 0644); !s) return s;
          any_trial = true;
        }
        if (to_verifier) {
          engine::TarEntry f;
          f.path = (parent == "/" ? "" : parent.substr(1) + "/") + h.path;
          f.type = engine::EntryType::kFile;
          f.mode = h.mode & 0777;  // no setuid or setgid bit
          f.uid = kAgentUid, f.gid = kAgentGid;
          f.content = std::move(data);
          if (auto s = verifier.add_entry(f); !s) return s;
          any_verifier = true;
        }
        return {};
      };
      if (auto r = engine::read_tar_stream(src, want, got); !r) return r;
      return skipped;
    });
    if (!st && st.error().code == Errc::kNotFound) {
      out.notes.push_back(a.source + ": not found in '" + service + "'");
      continue;
    }
    if (!st) return st.fail_with("collecting the artifact '" + a.source + "'");
  }
  if (any_trial) {
    auto t = trial.finish();
    if (!t) return t.fail();
    out.trial_tar = std::move(*t);
  }
  if (any_verifier) {
    auto v = verifier.finish();
    if (!v) return v.fail();
    out.verifier_tar = std::move(*v);
  }
  return out;
}

Result<std::vector<std::string>> run_collect_hooks(engine::Client& c, const std::map<std::string, std::string>& containers,
                                                   const std::vector<manifest::CollectHook>& hooks,
                                                   const std::atomic<int>* interrupted) {
  std::vector<std::string> notes;
  for (const auto& h : hooks) {
    auto it = containers.find(h.service.empty() ? "main" : h.service);
    if (it == containers.end()) {
      notes.push_back("collect hook '" + h.command + "': no service '" + h.service + "' in the trial");
      continue;
    }
    engine::ExecOptions o;
    o.cmd = {"sh", "-c", h.command};
    o.user = h.user == "root" ? "0:0" : h.user;
    o.timeout = Millis(static_cast<long long>(h.timeout_sec * 1000));
    o.output_cap = 4096;
    o.cancel = interrupted;
    if (it->first == "main") o.helper = kGraderHelper;  // the runner has forgectl's helper volume
    auto r = engine::exec_run(c, it->second, o);
    if (!r) return r.fail_with("running the collect hook '" + h.command + "'");
    if (r->cancelled) return fail(Errc::kCancelled, "running the collect hooks: interrupted");
    if (r->timed_out || r->exit_code != 0)
      notes.push_back("collect hook '" + h.command + "' in '" + it->first + "' " +
                      (r->timed_out ? "timed out" : "exited with " + std::to_string(r->exit_code)));
  }
  return notes;
}

}  // namespace forge::trial
