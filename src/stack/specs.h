// Turns the policy layer's plans into Engine API specs, and inspect results back into hardening.
#pragma once

#include <map>
#include <string>

#include "engine/containers.h"
#include "engine/networks.h"
#include "policy/topology.h"
#include "stack/labels.h"

namespace forge::stack {

engine::NetworkSpec network_spec(const policy::NetworkPlan& n, const StackLabels& labels);
// `network_names` maps the plan's network keys to the Docker names. The container and its new
// volumes carry the stack's labels (StackLabels::for_object).
engine::ContainerSpec container_spec(const policy::ContainerPlan& c, const StackLabels& labels,
                                     const std::map<std::string, std::string>& network_names);
// The local driver's options for a tmpfs-backed volume with these `o=` options.
std::map<std::string, std::string> tmpfs_driver_options(const std::string& o);
// What the daemon applied, in the policy layer's terms. `volume_options` holds the driver
// options of the container's volumes by name (inspect_volume), so a tmpfs-backed workspace is
// checked against what the volume really is, not what the request said.
policy::Hardening applied_hardening(
    const engine::ContainerInfo& info,
    const std::map<std::string, std::map<std::string, std::string>>& volume_options = {});

}  // namespace forge::stack
