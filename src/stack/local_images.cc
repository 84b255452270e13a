// Builds forgectl's local images from host files.
#include "stack/local_images.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

#include "core/elf_build_id.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "engine/images.h"
#include "engine/tar.h"
#include "stack/browser_image.h"
#include "stack/rootfs.h"

namespace forge::stack {

namespace fs = std::filesystem;

Result<std::string> find_exec_helper(const std::string& configured) {
  if (!configured.empty()) {
    if (::access(configured.c_str(), X_OK) == 0) return configured;
    return fail(Errc::kNotFound, "FORGECTL_EXEC_HELPER names '" + configured + "', which is not an executable file");
  }
  std::vector<std::string> dirs;
  std::error_code ec;
  auto exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path().string());
  for (const auto& d : dirs) {
    for (const char* rel : {"/forgectl-exec", "/../libexec/forgectl/forgectl-exec", "/../helper/forgectl-exec"}) {
      std::string p = d + rel;
      if (::access(p.c_str(), X_OK) == 0) return fs::weakly_canonical(p, ec).string();
    }
  }
  return fail(Errc::kNotFound, "cannot find forgectl-exec (the static exec helper) beside forgectl; "
                               "set FORGECTL_EXEC_HELPER to its path");
}

// The applets busybox provides, from `busybox --list`.
static Result<std::vector<std::string>> busybox_applets(const std::string& busybox) {
  std::string cmd = "'" + busybox + "' --list 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> p(::popen(cmd.c_str(), "r"), ::pclose);
  if (!p) return fail(Errc::kIo, "cannot run " + busybox + " --list");
  std::vector<std::string> out;
  std::array<char, 256> line{};
  while (std::fgets(line.data(), line.size(), p.get())) {
    std::string name = trim(line.data());
    if (!name.empty() && name.find('/') == std::string::npos) out.push_back(name);
  }
  if (out.empty())
    return fail(Errc::kNotFound, "'" + busybox + "' listed no applets; install busybox-static (scripts/install-deps.sh)");
  return out;
}

Result<std::string> helper_digest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(Errc::kNotFound, "cannot read the exec helper " + path);
  Sha256 h;
  std::array<char, 65536> buf{};
  while (in.read(buf.data(), buf.size()) || in.gcount() > 0)
    h.update(std::string_view(buf.data(), static_cast<std::size_t>(in.gcount())));
  return h.hex_digest();
}

Result<std::string> runner_build_context(const ImageSources& src) {
  if (::access(src.busybox.c_str(), X_OK) != 0)
    return fail(Errc::kNotFound, "'" + src.busybox + "' is missing; install busybox-static (scripts/install-deps.sh)");
  auto applets = busybox_applets(src.busybox);
  if (!applets) return applets.fail();
  engine::TarWriter tar;
  std::vector<Status> steps;
  steps.push_back(tar.add_file("Dockerfile",
                               "FROM scratch\n"
                               "COPY rootfs/ /\n"
                               // COPY makes everything root's; the agent's workspace and home are its own.
                               "COPY --chown=1000:1000 owned/ /work/\n"
                               "COPY --chown=1000:1000 owned/ /home/agent/\n"
                               "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
                               "WORKDIR /work\n"
                               "CMD [\"sleep\", \"2147483647\"]\n"));
  for (const char* d :
       {"rootfs", "rootfs/bin", "rootfs/etc", "rootfs/.forgectl", "rootfs/usr", "rootfs/usr/bin", "rootfs/sbin",
        "rootfs/usr/sbin", "rootfs/proc", "rootfs/dev", "rootfs/env", "rootfs/env/fs", "rootfs/home", "owned"})
    steps.push_back(tar.add_directory(d, 0755));
  // Where Tolokaforge tasks name the workspace; up adds it to foreign images.
  steps.push_back(tar.add_symlink("rootfs/env/fs/agent-visible", "/work"));
  steps.push_back(tar.add_directory("rootfs/tmp", 01777));
  steps.push_back(tar.add_host_file("rootfs/bin/busybox", src.busybox));
  for (const auto& a : *applets)
    if (a != "busybox") steps.push_back(tar.add_symlink("rootfs/bin/" + a, "busybox"));
  steps.push_back(tar.add_host_file("rootfs/.forgectl/exec", src.exec_helper));
  steps.push_back(tar.add_file("rootfs/etc/passwd",
                               "root:x:0:0:root:/root:/bin/sh\nagent:x:1000:1000:agent:/home/agent:/bin/sh\n"
                               "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"));
  steps.push_back(tar.add_file("rootfs/etc/group", "root:x:0:\nagent:x:1000:\nnogroup:x:65534:\n"));
  for (const auto& st : steps)
    if (!st) return st.fail_with("assembling the runner image");
  auto bytes = tar.finish();
  if (!bytes) return bytes.fail_with("assembling the runner image");
  return bytes;
}

Result<std::string> build_runner_image(engine::Client& c, const ImageSources& src,
                                       const std::function<void(std::string_view)>& progress) {
  auto ctx = runner_build_context(src);
  if (!ctx) return ctx.fail();
  engine::BuildSpec spec;
  spec.labels = {{kImageLabel, "runner"}, {kContentLabel, sha256_hex(*ctx)}};
  spec.context_tar = std::move(*ctx);
  spec.tags = {kRunnerImage};
  auto digest = helper_digest(src.exec_helper);
  if (!digest) return digest.fail_with("building the runner image");
  spec.labels[kHelperLabel] = *digest;
  return engine::build_image(c, spec, progress);
}

Result<std::string> squid_build_context(const SquidSources& src) {
  if (::access(src.squid.c_str(), X_OK) != 0)
    return fail(Errc::kNotFound, "'" + src.squid + "' is missing; install squid (scripts/install-deps.sh installs it)");
  for (const auto& [path, package] : {std::pair{src.unlinkd, "squid"},
                                      {src.mime_conf, "squid-common"},
                                      {src.errorpage_css, "squid-common"},
                                      {src.icons, "squid-common"},
                                      {src.error_templates, "squid-langpack"}})
    if (::access(path.c_str(), R_OK) != 0)
      return fail(Errc::kNotFound,
                  "'" + path + "' is missing; install " + package + " (scripts/install-deps.sh installs it)");
  std::set<std::string> libs;
  for (const auto* binary : {&src.squid, &src.unlinkd}) {
    auto l = shared_libraries(*binary);
    if (!l) return l.fail_with("assembling the squid image");
    libs.insert(l->begin(), l->end());
  }

  engine::TarWriter tar;
  // COPY gives files uid 0 whatever the tar says, so the proxy-owned directories get --chown.
  // (With --user 13:13 and stdout logs squid writes nowhere; they matter for root-start images.)
  Status df = tar.add_file("Dockerfile",
                           "FROM scratch\n"
                           "COPY rootfs/ /\n"
                           "COPY --chown=13:13 owned/ /run/squid/\n"
                           "COPY --chown=13:13 owned/ /var/spool/squid/\n"
                           "COPY --chown=13:13 owned/ /var/log/squid/\n"
                           "USER 13:13\n"
                           "EXPOSE 3128\n"
                           "ENTRYPOINT [\"/usr/sbin/squid\", \"-f\", \"/etc/squid/squid.conf\", \"-N\"]\n");
  if (!df) return df.fail_with("assembling the squid image");
  RootfsBuilder root(tar);
  root.dir("");  // "rootfs/": the image's / keeps 0755
  root.file("/usr/sbin/squid", src.squid);
  root.file("/usr/lib/squid/unlinkd", src.unlinkd);
  for (const auto& lib : libs) root.file(lib, lib);  // same paths: the loader's and the binaries' own
  root.file("/usr/share/squid/mime.conf", src.mime_conf);
  root.file("/etc/squid/errorpage.css", src.errorpage_css);  // also makes /etc/squid for the config
  root.tree("/usr/share/squid/icons", src.icons);
  root.tree("/usr/share/squid/errors/templates", src.error_templates);
  root.text("/etc/passwd", "root:x:0:0:root:/root:/sbin/nologin\nproxy:x:13:13:proxy:/bin:/usr/sbin/nologin\n");
  root.text("/etc/group", "root:x:0:\nproxy:x:13:\n");
  root.dir("/tmp", 01777);
  for (const char* d : {"/run", "/var/spool", "/var/log", "/proc", "/dev"}) root.dir(d);
  Status owned = tar.add_directory("owned", 0755);
  if (!owned) return owned.fail_with("assembling the squid image");
  if (auto st = root.status(); !st) return st.fail_with("assembling the squid image");
  auto bytes = tar.finish();
  if (!bytes) return bytes.fail_with("assembling the squid image");
  return bytes;
}

Result<std::string> build_squid_image(engine::Client& c, const SquidSources& src,
                                      const std::function<void(std::string_view)>& progress) {
  auto ctx = squid_build_context(src);
  if (!ctx) return ctx.fail();
  engine::BuildSpec spec;
  spec.labels = {{kImageLabel, "squid"}, {kContentLabel, sha256_hex(*ctx)}};
  spec.context_tar = std::move(*ctx);
  spec.tags = {kSquidImage};
  auto id = engine::build_image(c, spec, progress);
  if (!id) return id.fail_with("building " + std::string(kSquidImage));
  return id;
}

// The running binary, resolved: ldd must see the file, not /proc/self/exe (that would be ldd's own).
static Result<std::string> running_binary() {
  std::error_code ec;
  std::string exe = fs::read_symlink("/proc/self/exe", ec).string();
  if (ec) return fail(Errc::kIo, "cannot resolve /proc/self/exe: " + ec.message());
  if (exe.size() > 10 && exe.compare(exe.size() - 10, 10, " (deleted)") == 0)
    return fail(Errc::kNotFound, "the running forgectl (" + exe + ") was replaced on disk; run the new binary");
  return exe;
}

Result<std::string> services_build_context(const ServicesSources& src) {
  std::string binary = src.forgectl;
  if (binary.empty()) {
    auto self = running_binary();
    if (!self) return self.fail_with("assembling the services image");
    binary = *self;
  }
  if (::access(binary.c_str(), X_OK) != 0) return fail(Errc::kNotFound, "forgectl binary '" + binary + "' is missing");
  if (::access(src.busybox.c_str(), X_OK) != 0)
    return fail(Errc::kNotFound, "'" + src.busybox + "' is missing; install busybox-static (scripts/install-deps.sh)");
  auto applets = busybox_applets(src.busybox);
  if (!applets) return applets.fail_with("assembling the services image");
  // Only what healthchecks and a debugging `exec` need: a service container is no shell box.
  std::vector<std::string> wanted{"sh",    "nc",   "printf", "grep", "cat", "echo", "ls",
                                  "sleep", "true", "false",  "test", "env", "id"};
  for (const char* required : {"sh", "nc", "printf", "grep"})
    if (std::find(applets->begin(), applets->end(), required) == applets->end())
      return fail(Errc::kUnsupported, "'" + src.busybox + "' lacks the '" + required + "' applet healthchecks need");
  auto libs = shared_libraries(binary);
  if (!libs) return libs.fail_with("assembling the services image");

  engine::TarWriter tar;
  Status df = tar.add_file("Dockerfile",
                           "FROM scratch\n"
                           "COPY rootfs/ /\n"
                           "ENV PATH=/usr/local/bin:/usr/bin:/bin\n"
                           "USER 65534:65534\n"
                           "CMD [\"forgectl\", \"serve\", \"json-db\"]\n");
  if (!df) return df.fail_with("assembling the services image");
  RootfsBuilder root(tar);
  root.dir("");
  root.file("/usr/local/bin/forgectl", binary);
  for (const auto& lib : *libs) root.file(lib, lib);  // same paths: the loader's and the binary's own
  root.file("/bin/busybox", src.busybox);
  std::vector<Status> links;
  for (const auto& a : wanted)
    if (std::find(applets->begin(), applets->end(), a) != applets->end())
      links.push_back(tar.add_symlink("rootfs/bin/" + a, "busybox"));
  root.text("/etc/passwd",
            "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n");
  root.text("/etc/group", "root:x:0:\nnogroup:x:65534:\n");
  root.dir("/tmp", 01777);
  for (const char* d : {"/srv/www", "/proc", "/dev"}) root.dir(d);
  if (auto st = root.status(); !st) return st.fail_with("assembling the services image");
  for (const auto& st : links)
    if (!st) return st.fail_with("assembling the services image");
  auto bytes = tar.finish();
  if (!bytes) return bytes.fail_with("assembling the services image");
  return bytes;
}

Result<std::string> services_tag_for(const std::string& forgectl_binary) {
  // The linker's build ID names the binary's contents at no cost; a binary linked without one is
  // hashed whole (the same SHA-256 of a file as the helper's).
  if (auto id = elf_build_id(forgectl_binary); id && id->size() >= 12) return "forgectl/services:" + id->substr(0, 12);
  auto digest = helper_digest(forgectl_binary);
  if (!digest) return digest.fail_with("hashing " + forgectl_binary);
  return "forgectl/services:" + digest->substr(0, 12);
}

std::string own_services_image(const HostSettings& host) {
  if (!host.services_image.empty()) return host.services_image;
  static const std::string own = [] {
    auto tag = services_tag_for("/proc/self/exe");
    return tag ? *tag : std::string(kServicesImage);
  }();
  return own;
}

std::string effective_image(const std::string& ref, const HostSettings& host) {
  return ref == kServicesImage ? own_services_image(host) : ref;
}

Result<std::string> build_services_image(engine::Client& c, const ServicesSources& src,
                                         const std::function<void(std::string_view)>& progress) {
  auto ctx = services_build_context(src);
  if (!ctx) return ctx.fail();
  auto own = services_tag_for(src.forgectl.empty() ? "/proc/self/exe" : src.forgectl);
  if (!own) return own.fail();
  engine::BuildSpec spec;
  spec.labels = {{kImageLabel, "services"}, {kContentLabel, sha256_hex(*ctx)}};
  spec.context_tar = std::move(*ctx);
  spec.tags = {kServicesImage, *own};
  auto id = engine::build_image(c, spec, progress);
  if (!id) return id.fail_with("building " + std::string(kServicesImage));
  return id;
}

}  // namespace forge::stack

namespace forge::stack {

Result<std::vector<std::string>> ensure_local_images(engine::Client& c, const HostSettings& host,
                                                     const std::function<void(std::string_view)>& progress,
                                                     LocalImageNeeds needs) {
  std::vector<std::string> built;
  if (needs.runner && !engine::inspect_image(c, kRunnerImage)) {
    auto helper = find_exec_helper(host.exec_helper);
    if (!helper) return helper.fail_with("building " + std::string(kRunnerImage));
    if (auto id = build_runner_image(c, {"/bin/busybox", *helper}, progress); !id) return id.fail();
    built.push_back(kRunnerImage);
  }
  if (needs.squid && !engine::inspect_image(c, kSquidImage)) {
    if (auto id = build_squid_image(c, {}, progress); !id) return id.fail();
    built.push_back(kSquidImage);
  }
  if (needs.browser) {
    auto b = build_browser_image(c, {}, progress);  // a no-op when its content key matches
    if (!b) return b.fail();
    if (b->built) built.push_back(kBrowserImage);
  }
  // This binary's own services image: another forgectl build's json-db must never serve our trials.
  if (!needs.services) return built;
  if (std::string own = own_services_image(host); !engine::inspect_image(c, own)) {
    if (auto id = build_services_image(c, {}, progress); !id) return id.fail();
    built.push_back(own);
  }
  return built;
}

}  // namespace forge::stack
