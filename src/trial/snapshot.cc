#include "trial/snapshot.h"

#include <algorithm>
#include <map>

#include "core/scope_guard.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "engine/archive.h"
#include "engine/containers.h"
#include "engine/images.h"
#include "stack/labels.h"

namespace forge::trial {

namespace {

constexpr const char* kWorkspaceTar = "workspace.tar";
constexpr const char* kDbBody = "db.json";
constexpr const char* kServerState = "server.json";
constexpr const char* kInitialFiles = "files.txt";
constexpr const char* kServices = "services.txt";

// A service's volume's tar inside the snapshot: "volume-<service index>-<volume index>.tar".
std::string volume_file(std::size_t service, std::size_t volume) {
  return "volume-" + std::to_string(service) + "-" + std::to_string(volume) + ".tar";
}

// "workspace/a/b" → "a/b"; "workspace/" and "workspace" → "".
std::string below_top(const std::string& path) {
  auto slash = path.find('/');
  if (slash == std::string::npos) return "";
  std::string rest = path.substr(slash + 1);
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  return rest;
}

const char* type_name(engine::EntryType t) {
  switch (t) {
    case engine::EntryType::kDirectory: return "d";
    case engine::EntryType::kSymlink: return "l";
    case engine::EntryType::kFile: break;
  }
  return "f";
}

// Streamed under a budget: a workspace past kMaxSnapshotBytes stops the read (kExceeded), never
// held whole. Hard links come back as copies of their targets' content.
Result<std::vector<engine::TarEntry>> read_tree(engine::Client& c, const std::string& container,
                                                const std::string& path, std::size_t budget, const std::string& what) {
  std::vector<engine::TarEntry> out;
  std::map<std::string, std::size_t> by_path;
  auto keep = [&](const engine::TarHeader& h, std::string data) {
    engine::TarEntry e{h.path, h.type, h.mode, std::move(data), h.link_target, 0, h.uid, h.gid};
    if (!h.hardlink.empty())
      if (auto it = by_path.find(h.hardlink); it != by_path.end()) e.content = out[it->second].content;
    by_path[h.path] = out.size();
    out.push_back(std::move(e));
  };
  // Directories and links have no data (`got` never sees them); every file's is kept, an empty
  // one's too (asked for one byte, given none).
  auto want = [&](const engine::TarHeader& h) {
    if (h.type != engine::EntryType::kFile) keep(h, "");
    return engine::TarKeep{std::max<std::size_t>(1, static_cast<std::size_t>(h.size)), false};
  };
  auto got = [&](const engine::TarHeader& h, std::string data) -> Status {
    keep(h, std::move(data));
    return {};
  };
  auto st = engine::read_archive(c, container, path, [&](const engine::TarSource& source) {
    return engine::read_tar_stream(source, want, got, {budget, 0, what});
  });
  if (!st) return st.fail_with("reading " + what);
  return out;
}

Result<std::vector<engine::TarEntry>> read_workspace(engine::Client& c, const std::string& runner,
                                                     const std::string& workspace) {
  return read_tree(c, runner, workspace, kMaxSnapshotBytes, "the set-up workspace");
}

// The workspace's entries re-rooted at the workspace itself, owners and modes kept.
Result<std::string> relative_tar(const std::vector<engine::TarEntry>& entries) {
  engine::TarWriter w;
  for (auto e : entries) {
    e.path = below_top(e.path);
    if (e.path.empty()) continue;
    if (auto st = w.add_entry(e); !st) return st.fail_with("packing " + e.path);
  }
  return w.finish();
}

// A container of `image` that is only ever written to, read from and committed: its command never runs.
Result<std::string> inert_container(engine::Client& c, const std::string& image,
                                    const std::map<std::string, std::string>& labels) {
  engine::ContainerSpec spec;
  spec.image = image;
  spec.entrypoint = std::vector<std::string>{"/.forgectl-snapshot-never-started"};
  spec.cmd = std::vector<std::string>{};
  spec.labels = labels;
  spec.host.network_mode = "none";
  auto made = engine::create_container(c, spec);
  if (!made) return made.fail();
  return made->id;
}

}  // namespace

Result<TreeTar> read_tree_tar(engine::Client& c, const std::string& container, const std::string& path,
                              std::size_t budget, const std::string& what) {
  auto entries = read_tree(c, container, path, budget, what);
  if (!entries) return entries.fail();
  TreeTar out;
  for (const auto& e : *entries) out.bytes += e.content.size();
  auto tar = relative_tar(*entries);
  if (!tar) return tar.fail();
  out.tar = std::move(*tar);
  return out;
}

std::string encode_services(const std::vector<stack::ServiceSwap>& services) {
  std::string out;
  for (const auto& s : services) {
    out += base64_encode(s.key) + ' ' + base64_encode(s.image);
    for (const auto& v : s.volumes) out += ' ' + base64_encode(v.target);
    out += '\n';
  }
  return out;
}

Result<std::vector<stack::ServiceSwap>> decode_services(std::string_view text) {
  std::vector<stack::ServiceSwap> out;
  for (std::string_view line : split_lines(text)) {
    std::vector<std::string> decoded;
    while (!line.empty()) {
      const auto sp = line.find(' ');
      auto d = base64_decode(line.substr(0, sp));
      line = sp == std::string_view::npos ? std::string_view() : line.substr(sp + 1);
      if (!d || d->empty()) return fail(Errc::kProtocol, "a malformed line in its list of services");
      decoded.push_back(std::move(*d));
    }
    if (decoded.size() < 2) return fail(Errc::kProtocol, "a malformed line in its list of services");
    stack::ServiceSwap s{decoded[0], decoded[1], {}};
    for (std::size_t i = 2; i < decoded.size(); ++i) s.volumes.push_back({decoded[i], ""});
    out.push_back(std::move(s));
  }
  return out;
}

bool forgectl_service(const std::string& name) { return name == "json-db" || name == "mock-web" || name == "rag"; }

std::vector<std::string> captured_services(const manifest::TaskConfig& task) {
  std::vector<std::string> out;
  for (const auto& svc : task.environment.compose.services)
    if (!forgectl_service(svc.name)) out.push_back(svc.name);
  return out;
}

std::string fork_unsafe_because(const manifest::TaskConfig& task) {
  for (const auto& svc : task.environment.compose.services)
    if (!forgectl_service(svc.name) && !svc.tmpfs.empty())
      return "service '" + svc.name + "' keeps state in tmpfs " + svc.tmpfs.begin()->first +
             ", which a snapshot cannot hold";
  return {};
}

std::string uncapturable_mount(const std::string& service, const std::vector<engine::MountPoint>& mounts) {
  for (const auto& m : mounts) {
    if (m.type == "volume") continue;
    if (m.type == "bind" && !m.rw) continue;  // read-only: setup changed nothing there
    return "service '" + service + "' has a " + (m.rw ? "writable " : "") + m.type + " mount at " + m.destination +
           ", which a snapshot cannot hold";
  }
  return {};
}

std::string workspace_hash(const std::vector<engine::TarEntry>& entries) {
  std::vector<std::string> lines;
  for (const auto& e : entries) {
    std::string rel = below_top(e.path);
    if (rel.empty()) continue;
    const std::string body = e.type == engine::EntryType::kSymlink ? e.link_target : sha256_hex(e.content);
    lines.push_back(rel + '\0' + type_name(e.type) + ' ' + std::to_string(e.mode) + ' ' + std::to_string(e.uid) +
                    ':' + std::to_string(e.gid) + ' ' + std::to_string(e.content.size()) + ' ' + body);
  }
  std::sort(lines.begin(), lines.end());
  std::string all;
  for (const auto& l : lines) all += l + '\n';
  return sha256_hex(all);
}

std::string encode_initial_files(const std::map<std::string, std::string>& files) {
  std::string out;
  for (const auto& [path, content] : files) out += base64_encode(path) + ' ' + base64_encode(content) + '\n';
  return out;
}

Result<std::map<std::string, std::string>> decode_initial_files(std::string_view text) {
  std::map<std::string, std::string> out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const auto sp = line.find(' ');
    auto path = base64_decode(line.substr(0, sp));
    auto content = sp == std::string_view::npos ? std::nullopt : base64_decode(line.substr(sp + 1));
    if (!path || !content) return fail(Errc::kProtocol, "a malformed line in its list of initial files");
    out[*path] = std::move(*content);
  }
  return out;
}

Result<std::string> hash_workspace(engine::Client& c, const std::string& runner, const std::string& workspace) {
  auto entries = read_workspace(c, runner, workspace);
  if (!entries) return entries.fail();
  return workspace_hash(*entries);
}

Result<SnapshotImage> take_snapshot(engine::Client& c, const SnapshotSource& s) {
  auto entries = read_workspace(c, s.runner, s.workspace);
  if (!entries) return entries.fail();
  SnapshotImage out;
  out.workspace_sha256 = workspace_hash(*entries);
  auto ws = relative_tar(*entries);
  if (!ws) return ws.fail();
  engine::TarWriter outer;
  const std::string dir = std::string(kSnapshotDir).substr(1);
  if (auto st = outer.add_directory(dir, 0700); !st) return st.fail();
  if (auto st = outer.add_file(dir + "/" + kWorkspaceTar, *ws, 0600); !st) return st.fail();
  if (auto st = outer.add_file(dir + "/" + kDbBody, s.db_init_body, 0600); !st) return st.fail();
  if (auto st = outer.add_file(dir + "/" + kServerState, s.server_state, 0600); !st) return st.fail();
  if (auto st = outer.add_file(dir + "/" + kInitialFiles, encode_initial_files(s.initial_files), 0600); !st)
    return st.fail();
  if (auto st = outer.add_file(dir + "/" + kServices, encode_services(s.services), 0600); !st) return st.fail();
  for (std::size_t i = 0; i < s.services.size(); ++i)
    for (std::size_t j = 0; j < s.services[i].volumes.size(); ++j)
      if (auto st = outer.add_file(dir + "/" + volume_file(i, j), s.services[i].volumes[j].tar, 0600); !st)
        return st.fail();
  auto bytes = outer.finish();
  if (!bytes) return bytes.fail();

  auto id = inert_container(c, s.runner_image, s.labels);
  if (!id) return id.fail_with("creating the snapshot's container");
  ScopeGuard remove([&] { (void)engine::remove_container(c, *id); });
  if (auto st = engine::put_archive(c, *id, "/", std::move(*bytes)); !st) return st.fail_with("writing the snapshot");
  engine::CommitSpec spec{*id, s.repo, s.tag, "forgectl: a set-up state to fork trials from", s.labels};
  spec.labels["io.forgectl.image"] = "snapshot";  // not the runner image it was made from
  spec.labels[stack::kLabelSnapshotWorkspace] = out.workspace_sha256;  // a later run's fork checks it
  auto image = engine::commit_container(c, spec);
  if (!image) return image.fail();
  out.image_id = *image;
  return out;
}

Result<SnapshotState> fork_snapshot(engine::Client& c, const std::string& image, const std::string& runner,
                                  const std::string& workspace, const std::map<std::string, std::string>& labels) {
  auto id = inert_container(c, image, labels);
  if (!id) return id.fail_with("creating a container of snapshot " + image);
  ScopeGuard remove([&] { (void)engine::remove_container(c, *id); });
  auto a = engine::get_archive(c, *id, kSnapshotDir);
  if (!a) return a.fail_with("reading snapshot " + image);
  auto entries = engine::read_tar(a->tar);
  if (!entries) return entries.fail_with("reading snapshot " + image);
  std::string ws;
  SnapshotState held;
  bool found = false;
  std::map<std::string, std::string> volumes;  // file name → tar
  for (auto& e : *entries) {
    const std::string rel = below_top(e.path);
    if (rel == kWorkspaceTar) ws = std::move(e.content), found = true;
    else if (rel == kDbBody) held.db_init_body = std::move(e.content);
    else if (rel == kServerState) held.server_state = std::move(e.content);
    else if (rel == kInitialFiles) {
      auto files = decode_initial_files(e.content);
      if (!files) return files.fail_with("reading snapshot " + image);
      held.initial_files = std::move(*files);
    } else if (rel == kServices) {
      auto services = decode_services(e.content);
      if (!services) return services.fail_with("reading snapshot " + image);
      held.services = std::move(*services);
    } else if (rel.starts_with("volume-")) {
      volumes[rel] = std::move(e.content);
    }
  }
  for (std::size_t i = 0; i < held.services.size(); ++i)
    for (std::size_t j = 0; j < held.services[i].volumes.size(); ++j) {
      auto it = volumes.find(volume_file(i, j));
      if (it == volumes.end())
        return fail(Errc::kProtocol, "snapshot " + image + " lacks service '" + held.services[i].key + "''s volume " +
                                         held.services[i].volumes[j].target);
      held.services[i].volumes[j].tar = std::move(it->second);
    }
  if (!found) return fail(Errc::kProtocol, "snapshot " + image + " holds no workspace");
  auto inner = engine::read_tar(ws);
  if (!inner) return inner.fail_with("reading snapshot " + image + "'s workspace");
  if (inner->empty()) return held;  // setup left the workspace empty: nothing to write
  if (auto st = engine::put_archive(c, runner, workspace, std::move(ws)); !st)
    return st.fail_with("writing the snapshot's workspace");
  return held;
}

}  // namespace forge::trial
