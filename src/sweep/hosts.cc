// Engines of a sweep.
#include "sweep/hosts.h"

#include <sys/statvfs.h>


#include "core/parallel.h"
#include "engine/containers.h"
#include "engine/docker_host.h"
#include "engine/images.h"
#include "engine/networks.h"
#include "engine/system.h"
#include "engine/volumes.h"
#include "stack/inventory.h"
#include "stack/labels.h"
#include "stack/local_images.h"
#include "stack/orphans.h"
#include "sweep/node_images.h"

namespace forge::sweep {

Result<std::unique_ptr<HostPool>> HostPool::connect(const std::vector<std::string>& addresses, const HostSettings& host_settings) {
  auto pool = std::make_unique<HostPool>();
  const EnvLookup& env = host_settings.env;
  std::vector<std::string> wanted = addresses;
  if (wanted.empty()) wanted.push_back("");
  for (const auto& a : wanted) {
    auto host = a.empty() ? engine::docker_host_from_env(env) : engine::parse_docker_host(a, env);
    if (!host) return host.fail_with(a.empty() ? "DOCKER_HOST" : "--docker-host " + a);
    for (const auto& e : pool->engines_)
      if (e->address == host->describe()) return fail(Errc::kInvalid, "--docker-host " + a + " is given twice");
    if (auto st = engine::check_socket_access(*host); !st) return st.fail();
    auto c = engine::Client::connect(*host);
    if (!c) return c.fail_with("docker engine " + host->describe());
    auto slot = std::make_unique<EngineSlot>();
    slot->address = host->describe();
    slot->client = std::move(*c);
    pool->engines_.push_back(std::move(slot));
  }
  return pool;
}

EngineSlot& HostPool::acquire() {
  std::lock_guard lock(mu_);
  EngineSlot* best = engines_.front().get();
  for (auto& e : engines_)
    if (e->active < best->active) best = e.get();
  ++best->active;
  return *best;
}

void HostPool::release(EngineSlot& e) {
  std::lock_guard lock(mu_);
  --e.active;
}

namespace {

// Disk under the engine's root, for an engine on this host: trials write container layers and
// volumes there, and a full disk fails trials in ways that look like anything but a full disk.
Status check_disk(EngineSlot& e, Logger& log) {
  if (e.address.rfind("unix://", 0) != 0) return {};  // a remote engine's disk is not ours to see
  const auto& inf = e.info;
  if (!inf || inf->docker_root_dir.empty()) return {};
  struct statvfs fs {};
  if (::statvfs(inf->docker_root_dir.c_str(), &fs) != 0) return {};
  std::uint64_t free_mib = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize >> 20;
  std::string where = e.address + ": " + std::to_string(free_mib) + " MiB free under " + inf->docker_root_dir;
  if (free_mib < kMinFreeMib)
    return fail(Errc::kUnavailable, where + "; a sweep needs at least " + std::to_string(kMinFreeMib) +
                                        " MiB there for container layers (forgectl never prunes: free space first)");
  if (free_mib < kWarnFreeMib) log.warn(where + "; trials may fail if it fills up");
  return {};
}

}  // namespace

Status prepare_engines(HostPool& pool, const HostSettings& host, Slots& builds, Logger& log) {
  auto& engines = pool.engines();
  std::vector<Status> results(engines.size());
  parallel_for(engines.size(), [&](std::size_t i) {
    EngineSlot& e = *engines[i];
    if (auto inf = engine::info(*e.client)) e.info = std::move(*inf);
    if (auto st = check_disk(e, log); !st) {
      results[i] = st;
      return;
    }
    {
      Slots::Hold slot(&builds);
      // Another forgectl on this host (a shard beside this one) may be building the same images.
      auto lock = lock_engine_images(host, e.address, log);
      if (!lock) {
        results[i] = lock.fail();
        return;
      }
      auto built = stack::ensure_local_images(*e.client, host, {}, {.runner = true, .squid = true, .services = false});
      if (!built) {
        results[i] = fail(built.error().with_context("preparing " + e.address));
        return;
      }
      for (const auto& tag : *built) log.info(e.address + ": built " + tag);
    }
    auto reaped = stack::reap_orphans(*e.client, host);
    for (const auto& r : reaped.stacks)
      log.info(e.address + ": removed orphaned stack " + r.name + " (" + stack::orphan_reason_text(r.why) + ")" +
               (r.removed.clean() ? "" : "; " + r.removed.errors.front()));
    for (const auto& name : reaped.unowned)
      log.warn(e.address + ": stack " + name + ": " + stack::orphan_reason_text(stack::OrphanReason::kUnowned) +
               "; left alone (forgectl down " + name + " removes it)");
    if (!reaped.listed) {
      results[i] = fail(Errc::kUnavailable, e.address + ": " + reaped.errors.front());
      return;
    }
    for (const auto& err : reaped.errors) log.warn(e.address + ": " + err);
  }, engines.size());
  for (auto& st : results)
    if (!st) return st;
  return {};
}

std::vector<std::string> leak_audit(HostPool& pool, const std::string& run_id) {
  std::vector<std::string> left;
  engine::Filters f{{"label", {std::string(stack::kLabelRun) + "=" + run_id}}};
  for (auto& e : pool.engines()) {
    if (auto cs = engine::list_containers(*e->client, f)) {
      for (const auto& c : *cs) left.push_back(e->address + ": container " + (c.names.empty() ? c.id : c.names[0]));
    } else {
      left.push_back(e->address + ": containers could not be listed: " + cs.error().what());
    }
    if (auto ns = engine::list_networks(*e->client, f)) {
      for (const auto& n : *ns) left.push_back(e->address + ": network " + n.name);
    } else {
      left.push_back(e->address + ": networks could not be listed: " + ns.error().what());
    }
    engine::Filters snaps{{"label", {std::string(stack::kLabelSnapshot) + "=" + run_id}}};
    if (auto is = engine::list_images(*e->client, snaps)) {
      for (const auto& i : *is)
        if (!i.labels.count(stack::kLabelSnapshotKey))  // kept (--keep-snapshots): meant to outlive the run
          left.push_back(e->address + ": snapshot image " + i.id);
    } else {
      left.push_back(e->address + ": images could not be listed: " + is.error().what());
    }
    if (auto vs = engine::list_volumes(*e->client, f)) {
      for (const auto& v : *vs) left.push_back(e->address + ": volume " + v.name);
    } else {
      left.push_back(e->address + ": volumes could not be listed: " + vs.error().what());
    }
  }
  return left;
}

}  // namespace forge::sweep
