// The browser image: chromium-headless-shell, its libraries, NSS modules, fontconfig and fonts.
#include "stack/browser_image.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "core/sha256.h"
#include "engine/images.h"
#include "engine/tar.h"
#include "stack/local_images.h"
#include "stack/rootfs.h"

namespace forge::stack {

namespace fs = std::filesystem;

namespace {

constexpr const char* kDockerfile =
    "FROM scratch\n"
    "COPY rootfs/ /\n"
    // Chromium and fontconfig write only below HOME and XDG dirs: all in the per-trial /tmp tmpfs.
    "ENV PATH=/bin HOME=/tmp XDG_CONFIG_HOME=/tmp/.config XDG_CACHE_HOME=/tmp/.cache FONTCONFIG_PATH=/etc/fonts\n"
    "USER 65534:65534\n"
    "CMD [\"/bin/sleep\", \"2147483647\"]\n";

const char* const kApplets[] = {"sh", "sleep", "cat", "ls", "env", "id", "true"};

std::string missing(const std::string& path, const char* package) {
  return "'" + path + "' is missing; install " + package + " (scripts/install-deps.sh installs it)";
}

// The regular files below `dir` (links followed), at their host paths, sorted.
void add_tree(BrowserInputs& in, const std::string& dir) {
  std::error_code ec, ignored;
  std::vector<std::string> files;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (fs::is_regular_file(it->path(), ignored)) files.push_back(it->path().string());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) in.files.emplace_back(f, f);
}

}  // namespace

Result<BrowserInputs> browser_inputs(const BrowserSources& src) {
  if (::access(src.binary.c_str(), X_OK) != 0)
    return fail(Errc::kNotFound, missing(src.binary, "chromium-headless-shell"));
  if (::access((src.chromium_dir + "/icudtl.dat").c_str(), R_OK) != 0)
    return fail(Errc::kNotFound, missing(src.chromium_dir + "/icudtl.dat", "chromium-common"));
  if (::access(src.busybox.c_str(), X_OK) != 0) return fail(Errc::kNotFound, missing(src.busybox, "busybox-static"));
  if (::access((src.fontconfig_dir + "/fonts.conf").c_str(), R_OK) != 0)
    return fail(Errc::kNotFound, missing(src.fontconfig_dir + "/fonts.conf", "fontconfig-config"));
  BrowserInputs in;
  in.dockerfile = kDockerfile;
  for (const char* a : kApplets) in.applets.push_back(a);
  add_tree(in, src.chromium_dir);
  std::set<std::string> libs;
  std::vector<std::string> loaded{src.binary};
  for (const auto& m : src.nss_modules) {
    std::string path = src.lib_dir + "/" + m;
    if (::access(path.c_str(), R_OK) != 0) return fail(Errc::kNotFound, missing(path, "libnss3"));
    libs.insert(path);
    loaded.push_back(path);
  }
  for (const auto& bin : loaded) {
    auto l = shared_libraries(bin);
    if (!l) return l.fail_with("assembling the browser image");
    libs.insert(l->begin(), l->end());
  }
  for (const auto& lib : libs) in.files.emplace_back(lib, lib);
  add_tree(in, src.fontconfig_dir);
  for (const auto& d : src.font_dirs) {
    if (!fs::is_directory(d))
      return fail(Errc::kNotFound,
                  missing(d, d.find("liberation") != std::string::npos ? "fonts-liberation" : "fonts-dejavu-core"));
    add_tree(in, d);
  }
  in.files.emplace_back("/bin/busybox", src.busybox);
  return in;
}

Result<std::string> browser_content_key(const BrowserInputs& in) {
  Sha256 h;
  h.update(in.dockerfile);
  for (const auto& a : in.applets) h.update(a + '\0');
  for (const auto& [path, host] : in.files) {
    struct stat st {};
    if (::stat(host.c_str(), &st) != 0) return fail(Errc::kNotFound, "cannot stat " + host);
    h.update(path + '\0' + std::to_string(st.st_size) + '\0' + std::to_string(st.st_mtim.tv_sec) + '.' +
             std::to_string(st.st_mtim.tv_nsec) + '\0');
  }
  return h.hex_digest();
}

Result<std::string> browser_build_context(const BrowserInputs& in) {
  engine::TarWriter tar;
  if (auto st = tar.add_file("Dockerfile", in.dockerfile); !st) return st.fail_with("assembling the browser image");
  RootfsBuilder root(tar);
  root.dir("");
  for (const auto& [path, host] : in.files) root.file(path, host);
  for (const auto& a : in.applets) root.link("/bin/" + a, "busybox");
  root.text("/etc/passwd", "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/tmp:/sbin/nologin\n");
  root.text("/etc/group", "root:x:0:\nnogroup:x:65534:\n");
  root.dir("/tmp", 01777);
  for (const char* d : {"/proc", "/dev", "/sys"}) root.dir(d);
  if (auto st = root.status(); !st) return st.fail_with("assembling the browser image");
  auto bytes = tar.finish();
  if (!bytes) return bytes.fail_with("assembling the browser image");
  return bytes;
}

Result<BrowserImageBuild> build_browser_image(engine::Client& c, const BrowserSources& src,
                                              const std::function<void(std::string_view)>& progress) {
  auto in = browser_inputs(src);
  if (!in) return in.fail();
  auto key = browser_content_key(*in);
  if (!key) return key.fail_with("building " + std::string(kBrowserImage));
  if (auto info = engine::inspect_image(c, kBrowserImage)) {
    auto it = info->labels.find(kContentLabel);
    if (it != info->labels.end() && it->second == *key) return BrowserImageBuild{info->id, false};
  }
  auto ctx = browser_build_context(*in);
  if (!ctx) return ctx.fail();
  engine::BuildSpec spec;
  spec.labels = {{kImageLabel, "browser"}, {kContentLabel, *key}};
  spec.context_tar = std::move(*ctx);
  spec.tags = {kBrowserImage};
  auto id = engine::build_image(c, spec, progress);
  if (!id) return id.fail_with("building " + std::string(kBrowserImage));
  return BrowserImageBuild{*id, true};
}

}  // namespace forge::stack
