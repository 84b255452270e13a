// A snapshot's compose services: committed and read out, paused.
#include "trial/service_capture.h"

#include <algorithm>
#include <thread>

#include "core/clock.h"
#include "core/scope_guard.h"
#include "engine/containers.h"
#include "engine/images.h"
#include "stack/labels.h"
#include "stack/local_images.h"
#include "trial/snapshot.h"

namespace forge::trial {

namespace {

constexpr Millis kHealthyAgain{120000};

// Docker reports a container with a healthcheck "unhealthy" the moment it is unpaused, until its
// next check passes; the sandbox watch would blame that on the agent. So a paused service with a
// healthcheck is waited for until Docker itself says healthy again.
Status healthy_again(engine::Client& c, const std::string& key, const std::string& id) {
  const auto deadline = Deadline::in(kHealthyAgain);
  for (;;) {
    auto info = engine::inspect_container(c, id);
    if (!info) return info.fail();
    if (info->state.health.empty() || info->state.health == "healthy") return {};
    if (!info->state.running) return fail(Errc::kUnavailable, "service '" + key + "' stopped once unpaused");
    if (deadline.expired())
      return fail(Errc::kTimeout, "service '" + key + "' was not healthy again " +
                                      std::to_string(kHealthyAgain.count() / 1000) + " s after its snapshot");
    std::this_thread::sleep_for(Millis(100));
  }
}

// One service, paused while it is committed and its volumes read: crash-consistent, as a power
// cut would leave it (a database replays its log when the fork starts it).
Result<stack::ServiceSwap> capture_one(engine::Client& c, const std::string& key, const std::string& id,
                                       const ServiceCapture& o, std::size_t& left) {
  auto info = engine::inspect_container(c, id);
  if (!info) return info.fail();
  if (auto why = uncapturable_mount(key, info->mounts); !why.empty()) return fail(Errc::kUnsupported, why);
  if (auto st = engine::pause_container(c, id); !st) return st.fail();
  ScopeGuard unpause([&] { (void)engine::unpause_container(c, id); });
  engine::CommitSpec spec{id, o.repo, service_image_tag(o.tag, key), "forgectl: service '" + key + "' as setup left it",
                          o.labels};
  spec.labels[stack::kImageLabel] = "snapshot-service";
  auto image = engine::commit_container(c, spec);
  if (!image) return image.fail();
  stack::ServiceSwap out{key, *image, {}};
  ScopeGuard drop([&] { (void)engine::remove_image(c, *image, true); });
  for (const auto& m : info->mounts) {
    if (m.type != "volume") continue;
    // A budget of 0 would read without limit: what is spent is spent.
    if (left == 0) return fail(Errc::kExceeded, "service '" + key + "''s volumes are past the snapshot's limit");
    auto tree = read_tree_tar(c, id, m.destination, left, "service '" + key + "''s volume " + m.destination);
    if (!tree) return tree.fail();
    left -= std::min(left, tree->bytes);
    out.volumes.push_back({m.destination, std::move(tree->tar)});
  }
  drop.dismiss();
  return out;
}

Result<stack::ServiceSwap> capture_paused(engine::Client& c, const std::string& key, const std::string& id,
                                          const ServiceCapture& o, std::size_t& left) {
  auto s = capture_one(c, key, id, o, left);
  auto healthy = healthy_again(c, key, id);
  if (s && !healthy) (void)engine::remove_image(c, s->image, true);
  if (!healthy) return healthy.fail();
  return s;
}

}  // namespace

std::string service_image_tag(const std::string& tag, const std::string& service) {
  return (tag + "-" + service).substr(0, 128);
}

Result<std::vector<stack::ServiceSwap>> capture_services(engine::Client& c, const stack::UpResult& up,
                                                         const std::vector<std::string>& keys,
                                                         const ServiceCapture& o) {
  std::vector<stack::ServiceSwap> out;
  ScopeGuard drop([&] {
    for (const auto& s : out) (void)engine::remove_image(c, s.image, true);
  });
  std::size_t left = o.budget;
  for (const auto& key : keys) {
    auto id = up.containers.find(key);
    if (id == up.containers.end()) return fail(Errc::kNotFound, "service '" + key + "' is not in the stack");
    auto s = capture_paused(c, key, id->second, o, left);
    if (!s) return s.fail_with("capturing service '" + key + "'");
    out.push_back(std::move(*s));
  }
  drop.dismiss();
  return out;
}

}  // namespace forge::trial
