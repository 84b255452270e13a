// Builds forgectl's local images from host files.
#include "stack/local_images.h"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "core/strings.h"
#include "engine/images.h"
#include "engine/tar.h"

namespace forge::stack {

namespace fs = std::filesystem;

Result<std::string> find_exec_helper(const std::string& self_dir) {
  if (const char* env = std::getenv("FORGECTL_EXEC_HELPER"); env && *env) {
    if (::access(env, X_OK) == 0) return std::string(env);
    return fail(Errc::kNotFound, std::string("FORGECTL_EXEC_HELPER names '") + env + "', which is not an executable file");
  }
  std::vector<std::string> dirs;
  std::error_code ec;
  auto exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path().string());
  if (!self_dir.empty()) dirs.push_back(self_dir);
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
                               "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
                               "WORKDIR /work\n"
                               "CMD [\"sleep\", \"2147483647\"]\n"));
  for (const char* d : {"rootfs", "rootfs/bin", "rootfs/etc", "rootfs/.forgectl", "rootfs/work", "rootfs/usr",
                        "rootfs/usr/bin", "rootfs/sbin", "rootfs/usr/sbin", "rootfs/proc", "rootfs/dev"})
    steps.push_back(tar.add_directory(d, 0755));
  steps.push_back(tar.add_directory("rootfs/tmp", 01777));
  steps.push_back(tar.add_host_file("rootfs/bin/busybox", src.busybox));
  for (const auto& a : *applets)
    if (a != "busybox") steps.push_back(tar.add_symlink("rootfs/bin/" + a, "busybox"));
  steps.push_back(tar.add_host_file("rootfs/.forgectl/exec", src.exec_helper));
  steps.push_back(tar.add_file("rootfs/etc/passwd",
                               "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"));
  steps.push_back(tar.add_file("rootfs/etc/group", "root:x:0:\nnogroup:x:65534:\n"));
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
  spec.context_tar = std::move(*ctx);
  spec.tags = {kRunnerImage};
  spec.labels = {{kImageLabel, "runner"}};
  return engine::build_image(c, spec, progress);
}

}  // namespace forge::stack
