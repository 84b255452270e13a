// Workspace seeding and disk use.
#include "stack/workspace.h"

#include <filesystem>
#include <mutex>

#include "core/scope_guard.h"
#include "core/strings.h"
#include "engine/archive.h"
#include "engine/containers.h"
#include "engine/images.h"
#include "engine/tar.h"
#include "stack/up.h"

namespace forge::stack {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxSeedBytes = 1ULL << 30;
constexpr std::size_t kMaxCachedSeed = 64ULL << 20;

// The last few images' workdirs, by "<image id>|<workdir>": a sweep runs one image many times.
struct SeedCache {
  std::mutex mu;
  std::map<std::string, WorkdirSeed> seeds;
};
SeedCache& seed_cache() {
  static SeedCache c;
  return c;
}

}  // namespace

Result<std::string> image_working_dir(engine::Client& c, const std::string& image) {
  auto img = engine::inspect_image(c, image);
  if (!img) return img.fail_with("reading the WORKDIR of image " + image);
  std::string dir = fs::path(img->working_dir).lexically_normal().generic_string();
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir.empty() || dir.front() != '/' || dir == "/") return std::string();
  return dir;
}

Result<WorkdirSeed> image_workdir(engine::Client& c, const std::string& image, const std::string& workdir,
                                  const std::map<std::string, std::string>& labels) {
  const std::string what = "reading the workdir " + workdir + " of image " + image;
  auto img = engine::inspect_image(c, image);
  if (!img) return img.fail_with(what);
  const std::string key = img->id + "|" + workdir;
  {
    auto& cache = seed_cache();
    std::lock_guard lock(cache.mu);
    if (auto it = cache.seeds.find(key); it != cache.seeds.end()) return it->second;
  }
  engine::ContainerSpec spec;
  spec.image = img->id;
  spec.cmd = std::vector<std::string>{"true"};  // never started
  spec.labels = labels;
  spec.host.network_mode = "none";
  spec.host.cap_drop = {"ALL"};
  auto probe = engine::create_container(c, spec);
  if (!probe) return probe.fail_with(what);
  ScopeGuard remove([&] { (void)engine::remove_container(c, probe->id); });
  WorkdirSeed seed;
  auto a = engine::get_archive(c, probe->id, workdir);
  if (!a && a.error().code == Errc::kNotFound) return seed;  // no such directory: an empty workspace
  if (!a) return a.fail_with(what);
  if (a->tar.size() > kMaxSeedBytes) return fail(Errc::kInvalid, what + ": larger than 1 GiB");
  auto entries = engine::read_tar(a->tar);
  if (!entries) return entries.fail_with(what);
  if (entries->empty() || entries->front().type != engine::EntryType::kDirectory)
    return fail(Errc::kInvalid, what + ": it is not a directory");
  seed.exists = true;
  seed.uid = entries->front().uid;
  seed.gid = entries->front().gid;
  seed.mode = entries->front().mode & 07777;
  if (entries->size() > 1) seed.tar = std::move(a->tar);
  if (seed.tar.size() <= kMaxCachedSeed) {
    auto& cache = seed_cache();
    std::lock_guard lock(cache.mu);
    if (cache.seeds.size() >= 8) cache.seeds.erase(cache.seeds.begin());
    cache.seeds[key] = seed;
  }
  return seed;
}

Status seed_workspace(engine::Client& c, const std::string& container, const std::string& workdir,
                      const WorkdirSeed& seed) {
  if (seed.tar.empty()) return {};
  std::string parent = fs::path(workdir).parent_path().string();
  // The entries are "<base>/…": unpacked into the parent, they land in the workspace volume.
  if (auto st = engine::put_archive(c, container, parent.empty() ? "/" : parent, seed.tar); !st)
    return st.fail_with("copying the image's " + workdir + " into the workspace");
  return {};
}

std::optional<WorkspaceOwner> workspace_owner(const UpResult& up) {
  WorkspaceOwner o;
  if (!policy::parse_user_ids(up.plan.runner.hardening.user, o.uid, o.gid)) return std::nullopt;
  return o;
}

Result<std::int64_t> disk_usage(engine::Client& c, const std::string& container) {
  auto size = engine::container_size(c, container);
  if (!size) return size.fail();
  return size->rw;
}

std::vector<DiskWatch> disk_watches(const UpResult& up) {
  std::vector<DiskWatch> out;
  auto add = [&](const policy::ContainerPlan& p) {
    const auto& h = p.hardening;
    if (h.writable_layer_limit <= 0 || h.storage_opt || h.readonly_rootfs) return;
    if (auto it = up.containers.find(p.key); it != up.containers.end())
      out.push_back({p.key, it->second, h.writable_layer_limit});
  };
  add(up.plan.runner);
  for (const auto& s : up.plan.services) add(s);
  return out;
}

}  // namespace forge::stack
