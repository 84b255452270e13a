// Task builds: content-addressed tags in forgectl's namespace, label checks, limits.
#include "stack/task_build.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

#include "core/files.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "engine/tar.h"
#include "stack/local_images.h"

namespace forge::stack {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxContextEntries = 200000;
constexpr std::uintmax_t kMaxContextBytes = 1ULL << 30;

}  // namespace

Result<TaskBuildContext> task_build_context(const manifest::ComposeBuild& build) {
  const fs::path root = build.context;
  const std::string what = "build context " + root.string();
  std::vector<fs::path> paths;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const std::string rel = fs::relative(it->path(), root, ec).generic_string();
    if (std::find(build.exclude.begin(), build.exclude.end(), rel) != build.exclude.end()) {
      if (it->is_directory() && !it->is_symlink()) it.disable_recursion_pending();
      continue;
    }
    paths.push_back(it->path());
    if (paths.size() > kMaxContextEntries)
      return fail(Errc::kInvalid, what + ": more than " + std::to_string(kMaxContextEntries) + " entries");
  }
  if (ec) return fail(Errc::kIo, "reading " + what + ": " + ec.message());
  std::sort(paths.begin(), paths.end());  // stable bytes, so the hash (and the tag) is stable
  engine::TarWriter tar;
  std::uintmax_t total = 0;
  for (const auto& p : paths) {
    auto rel = fs::relative(p, root, ec).generic_string();
    auto st = fs::symlink_status(p, ec);
    Status added;
    if (fs::is_symlink(st)) {
      added = tar.add_symlink(rel, fs::read_symlink(p, ec).string());
    } else if (fs::is_directory(st)) {
      added = tar.add_directory(rel, static_cast<unsigned>(st.permissions()) & 07777);
    } else if (fs::is_regular_file(st)) {
      total += fs::file_size(p, ec);
      if (total > kMaxContextBytes) return fail(Errc::kInvalid, what + ": larger than 1 GiB");
      added = tar.add_host_file(rel, p.string());
    }
    if (!added) return added.fail_with(what);
  }
  auto bytes = tar.finish();
  if (!bytes) return bytes.fail_with(what);
  Sha256 h;
  h.update(*bytes);
  h.update(std::string_view("\0dockerfile\0", 12));
  h.update(build.dockerfile);
  for (const auto& x : build.exclude) {
    h.update(std::string_view("\0exclude\0", 9));
    h.update(x);
  }
  for (const auto& [k, v] : build.args) {  // a std::map: sorted
    h.update(std::string_view("\0arg\0", 5));
    h.update(k + "=" + v);
  }
  return TaskBuildContext{std::move(*bytes), h.hex_digest()};
}

std::vector<std::string> dockerfile_bases(std::string_view dockerfile) {
  // Continuation lines joined first: FROM may be split with a trailing backslash.
  std::vector<std::string> lines;
  std::string cur;
  std::size_t start = 0;
  while (start <= dockerfile.size()) {
    std::size_t nl = dockerfile.find('\n', start);
    std::string_view line = dockerfile.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    start = nl == std::string_view::npos ? dockerfile.size() + 1 : nl + 1;
    std::string l(line);
    while (!l.empty() && (l.back() == '\r' || l.back() == ' ' || l.back() == '\t')) l.pop_back();
    if (!l.empty() && l.back() == '\\') {
      l.pop_back();
      cur += l + " ";
      continue;
    }
    lines.push_back(cur + l);
    cur.clear();
  }
  std::vector<std::string> stages, out;
  for (const auto& l : lines) {
    std::vector<std::string> words;
    std::size_t i = 0;
    while (i < l.size()) {
      while (i < l.size() && (l[i] == ' ' || l[i] == '\t')) ++i;
      std::size_t j = i;
      while (j < l.size() && l[j] != ' ' && l[j] != '\t') ++j;
      if (j > i) words.push_back(l.substr(i, j - i));
      i = j;
    }
    if (words.empty() || to_lower(words[0]) != "from") continue;
    std::size_t k = 1;
    while (k < words.size() && words[k].rfind("--", 0) == 0) ++k;  // --platform=…
    if (k >= words.size()) continue;
    const std::string image = words[k];
    const bool earlier_stage = std::find(stages.begin(), stages.end(), to_lower(image)) != stages.end();
    if (k + 2 < words.size() && to_lower(words[k + 1]) == "as") stages.push_back(to_lower(words[k + 2]));
    if (earlier_stage || to_lower(image) == "scratch") continue;
    if (std::find(out.begin(), out.end(), image) == out.end()) out.push_back(image);
  }
  return out;
}

std::string task_image_tag(std::string_view service, std::string_view hash) {
  // A repository path component is [a-z0-9]+ joined by single '.', '_' or '-' runs.
  std::string repo;
  for (char ch : service) {
    char c = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (alnum)
      repo += c;
    else if (!repo.empty() && repo.back() != '-')
      repo += '-';
  }
  while (!repo.empty() && repo.back() == '-') repo.pop_back();
  if (repo.empty()) repo = "service";
  return std::string(kTaskImageRepo) + "/" + repo + ":" + std::string(hash.substr(0, 16));
}

engine::BuildSpec task_build_spec(TaskBuildContext ctx, const manifest::ComposeBuild& build,
                                  const TaskBuildLimits& limits) {
  engine::BuildSpec spec;
  spec.context_tar = std::move(ctx.tar);
  spec.dockerfile = build.dockerfile;
  spec.build_args = build.args;
  spec.labels = {{kImageLabel, kTaskBuildValue}, {kContentLabel, ctx.hash}};
  spec.network_mode = limits.network ? "default" : "none";
  spec.memory = limits.memory;
  spec.memswap = limits.memory;
  spec.cpu_period = 100000;
  spec.cpu_quota = static_cast<std::int64_t>(std::llround(limits.cpus * 100000));
  spec.ulimits = {{"nproc", limits.nproc, limits.nproc}};
  return spec;  // no tag: forgectl tags the result itself once it has checked the name is free
}

Result<std::string> ensure_task_image(engine::Client& c, std::string_view service, const manifest::ComposeBuild& build,
                                      const TaskBuildLimits& limits, Slots* slots,
                                      const std::function<void(std::string_view)>& progress) {
  const std::string what = "service '" + std::string(service) + "'";
  auto ctx = task_build_context(build);
  if (!ctx) return ctx.fail_with(what);
  const std::string hash = ctx->hash;
  const std::string tag = task_image_tag(service, hash);
  // Ours, or nobody's: a tag forgectl did not build is never overwritten.
  auto ours = [&](const engine::ImageInfo& img) {
    auto kind = img.labels.find(kImageLabel);
    auto content = img.labels.find(kContentLabel);
    return kind != img.labels.end() && kind->second == kTaskBuildValue && content != img.labels.end() &&
           content->second == hash;
  };
  auto refuse = [&] {
    return fail(Errc::kConflict, what + ": image " + tag + " exists but forgectl did not build it (no " +
                                     std::string(kImageLabel) + "=" + kTaskBuildValue +
                                     " label with this content); forgectl will not overwrite it");
  };
  if (auto img = engine::inspect_image(c, tag))
    return ours(*img) ? Result<std::string>(tag) : Result<std::string>(refuse());
  // The builder pulls a missing base image: refuse before it can.
  auto text = read_text(fs::path(build.context) / build.dockerfile, 1u << 20);
  if (!text) return text.fail_with(what + ": reading its Dockerfile");
  for (const auto& base : dockerfile_bases(*text)) {
    if (base.find('$') != std::string::npos)
      return fail(Errc::kInvalid, what + ": the Dockerfile's base image '" + base +
                                      "' is given by a variable, which forgectl cannot check is on the daemon "
                                      "(it never pulls); name the image");
    if (!engine::inspect_image(c, base))
      return fail(Errc::kNotFound, what + ": the Dockerfile's base image '" + base +
                                       "' is not on the daemon; forgectl never pulls: build, tag or load it first");
  }
  Slots::Hold slot(slots);
  if (progress) progress("building image " + tag + " for service '" + std::string(service) + "'");
  auto id = engine::build_image(c, task_build_spec(std::move(*ctx), build, limits));
  if (!id) return id.fail_with(what);
  if (auto img = engine::inspect_image(c, tag)) {  // another process built the same content meanwhile
    if (!ours(*img)) return refuse();
    return tag;
  }
  auto colon = tag.rfind(':');
  if (auto st = engine::tag_image(c, *id, tag.substr(0, colon), tag.substr(colon + 1)); !st) return st.fail_with(what);
  return tag;
}

}  // namespace forge::stack
