// Turns the policy layer's plans into Engine API specs, and inspect results back into hardening.
#pragma once

#include <map>
#include <string>

#include "engine/containers.h"
#include "engine/networks.h"
#include "policy/topology.h"

namespace forge::stack {

engine::NetworkSpec network_spec(const policy::NetworkPlan& n, std::map<std::string, std::string> labels);
// `network_names` maps the plan's network keys to the Docker names.
engine::ContainerSpec container_spec(const policy::ContainerPlan& c, const std::map<std::string, std::string>& stack_labels,
                                     const std::map<std::string, std::string>& network_names);
// What the daemon applied, in the policy layer's terms.
policy::Hardening applied_hardening(const engine::ContainerInfo& info);

}  // namespace forge::stack
