// Building a sweep's images on its node, once per engine and host.
#include "sweep/node_images.h"

#include "core/parallel.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "stack/browser_image.h"
#include "stack/local_images.h"
#include "stack/python_image.h"
#include "stack/task_build.h"

namespace forge::sweep {

namespace {

// Runs `work` on every engine in parallel, under its image lock and a build slot; the first
// error, naming its engine, is the result.
template <typename F>
Status on_every_engine(HostPool& pool, const HostSettings& host, Slots& builds, Logger& log, F work) {
  auto& engines = pool.engines();
  std::vector<Status> results(engines.size());
  parallel_for(
      engines.size(),
      [&](std::size_t i) {
        EngineSlot& e = *engines[i];
        Slots::Hold slot(&builds);
        auto lock = lock_engine_images(host, e.address, log);
        if (!lock) {
          results[i] = lock.fail();
          return;
        }
        if (auto st = work(e); !st) results[i] = fail(st.error().with_context("preparing " + e.address));
      },
      engines.size());
  for (auto& st : results)
    if (!st) return st;
  return {};
}

}  // namespace

std::string image_lock_path(const HostSettings& host, const std::string& address) {
  return host.state_dir + "/images-" + sha256_hex(address).substr(0, 12) + ".lock";
}

Result<FileLock> lock_engine_images(const HostSettings& host, const std::string& address, Logger& log) {
  std::string path = image_lock_path(host, address);
  auto held = FileLock::try_acquire(path);
  if (held || held.error().code != Errc::kConflict) return held;
  log.info(address + ": waiting for another forgectl on this host to finish building images (" + path + ")");
  return FileLock::acquire(path);
}

Status ensure_services_image(HostPool& pool, const HostSettings& host, Slots& builds, Logger& log) {
  return on_every_engine(pool, host, builds, log, [&](EngineSlot& e) -> Status {
    auto built = stack::ensure_local_images(*e.client, host, {}, {.runner = false, .squid = false, .services = true});
    if (!built) return built.fail();
    for (const auto& tag : *built) log.info(e.address + ": built " + tag);
    return {};
  });
}

Status ensure_browser_image(HostPool& pool, const HostSettings& host, Slots& builds, Logger& log) {
  return on_every_engine(pool, host, builds, log, [&](EngineSlot& e) -> Status {
    auto built = stack::build_browser_image(*e.client, {}, [&log](std::string_view line) { log.debug(trim(line)); });
    if (!built) return built.fail();
    if (built->built) log.info(e.address + ": built " + stack::kBrowserImage);
    return {};
  });
}

Status ensure_python_image(HostPool& pool, const HostSettings& host, Slots& builds, Logger& log) {
  std::string mirror = host.debian_mirror.empty() ? "http://deb.debian.org/debian" : host.debian_mirror;
  return on_every_engine(pool, host, builds, log, [&](EngineSlot& e) -> Status {
    auto built = stack::build_python_image(*e.client, {.debian_mirror = mirror},
                                           [&log](std::string_view line) { log.debug(trim(line)); });
    if (!built) return built.fail();
    if (built->built_base) log.info(e.address + ": built " + stack::kPythonBaseImage);
    if (built->built_image) log.info(e.address + ": built " + stack::kPythonImage);
    return {};
  });
}

Status build_task_images(HostPool& pool, const std::vector<manifest::TaskConfig>& tasks, const HostSettings& host,
                         Slots& builds, Logger& log) {
  bool any = false;
  for (const auto& t : tasks)
    for (const auto& s : t.environment.compose.services) any = any || s.build.has_value();
  if (!any) return {};
  return on_every_engine(pool, host, builds, log, [&](EngineSlot& e) -> Status {
    for (const auto& t : tasks) {
      stack::TaskBuildLimits limits;
      limits.network = t.environment.manifest.network_policy == manifest::NetworkPolicy::kFullInternet;
      for (const auto& s : t.environment.compose.services) {
        if (!s.build) continue;
        // The slot is ours already (on_every_engine): no second one, or a single slot would deadlock.
        auto tag = stack::ensure_task_image(*e.client, s.name, *s.build, limits, nullptr,
                                            [&log](std::string_view line) { log.debug(trim(line)); });
        if (!tag) return tag.fail_with("task " + t.task_id + ", service '" + s.name + "'");
        log.debug(e.address + ": task " + t.task_id + " service '" + s.name + "' image " + *tag);
      }
    }
    return {};
  });
}

}  // namespace forge::sweep
