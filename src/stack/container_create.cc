// One planned container created and its hardening read back.
#include "stack/container_create.h"

#include "core/strings.h"
#include "engine/volumes.h"
#include "policy/hardening.h"
#include "stack/specs.h"

namespace forge::stack {

namespace {

bool refused_storage_opt(const Error& e) {
  std::string msg = to_lower(e.message);
  return msg.find("storage-opt") != std::string::npos || msg.find("storageopt") != std::string::npos ||
         msg.find("quota") != std::string::npos;
}

}  // namespace

Result<std::string> create_verified(engine::Client& c, policy::ContainerPlan& p, const StackLabels& labels,
                                    const std::map<std::string, std::string>& net_names,
                                    const std::function<void(std::string_view)>& progress,
                                    const std::function<void(engine::ContainerSpec&)>& adjust) {
  const std::string who = std::string(policy::role_name(p.role)) + " '" + p.key + "'";
  auto spec = [&] {
    auto s = container_spec(p, labels, net_names);
    if (adjust) adjust(s);
    return s;
  };
  auto created = engine::create_container(c, spec());
  if (!created && p.hardening.storage_opt && refused_storage_opt(created.error())) {
    if (progress) progress(who + ": the daemon refused StorageOpt size; the disk cap is watched instead");
    p.hardening.storage_opt = false;
    created = engine::create_container(c, spec());
  }
  if (!created) return created.fail_with(who);
  auto info = engine::inspect_container(c, created->id);
  if (!info) return info.fail();
  // What a tmpfs-backed volume really is: the volume's own options, not the request's echo.
  std::map<std::string, std::map<std::string, std::string>> volume_options;
  for (const auto& m : info->mounts) {
    if (m.type != "volume" || m.name.empty()) continue;
    auto v = engine::inspect_volume(c, m.name);
    if (!v) return v.fail_with(who);
    volume_options[m.name] = v->options;
  }
  auto missing = policy::hardening_mismatches(p.hardening, applied_hardening(*info, volume_options));
  // A container planned without a network must have none (not the daemon's default bridge), or
  // the one container's it was planned to share.
  const std::string mode = p.netns_container.empty() ? "none" : "container:" + p.netns_container;
  if (p.networks.empty() && info->host.network_mode != mode)
    missing.push_back("NetworkMode " + mode + " (the daemon reports '" + info->host.network_mode + "')");
  if (!missing.empty())
    return fail(Errc::kUnsupported, "the runtime did not apply the hardening of " + who + " (" + join(missing, "; ") +
                                        "); refusing the stack");
  return created->id;
}

}  // namespace forge::stack
