// Plans → Engine API specs.
#include "stack/specs.h"

#include <algorithm>
#include <cstdlib>

namespace forge::stack {

engine::NetworkSpec network_spec(const policy::NetworkPlan& n, const StackLabels& labels) {
  engine::NetworkSpec s;
  s.name = n.name;
  s.internal = n.internal;
  s.ipam = engine::IpamConfig{n.subnet.str(), n.subnet.gateway()};
  s.labels = labels.for_object("network");
  s.labels[kLabelBridge] = n.bridge;
  s.options = {{"com.docker.network.bridge.name", n.bridge}};
  return s;
}

static engine::Healthcheck healthcheck_of(const manifest::ComposeHealthcheck& h) {
  engine::Healthcheck e;
  e.test = h.disable ? std::vector<std::string>{"NONE"} : h.test;
  e.interval = h.interval;
  e.timeout = h.timeout;
  e.start_period = h.start_period;
  e.retries = h.retries;
  return e;
}

engine::ContainerSpec container_spec(const policy::ContainerPlan& c, const StackLabels& labels,
                                     const std::map<std::string, std::string>& network_names) {
  engine::ContainerSpec s;
  s.name = c.name;
  s.image = c.image;
  s.cmd = c.cmd;
  s.entrypoint = c.entrypoint;
  s.env = c.env;
  s.user = c.hardening.user;
  s.workdir = c.workdir;
  s.labels = c.labels;
  for (const auto& [k, v] : labels.for_object(policy::role_name(c.role)))
    s.labels[k] = v;  // ours win over the compose file's
  s.labels[kLabelService] = c.key;
  if (c.healthcheck) s.healthcheck = healthcheck_of(*c.healthcheck);
  s.volumes = c.volumes;
  const auto& h = c.hardening;
  s.host.cap_drop = h.cap_drop;
  s.host.cap_add = h.cap_add;
  if (h.no_new_privileges) s.host.security_opt = {"no-new-privileges:true"};
  s.host.pids_limit = h.pids_limit;
  s.host.memory = h.memory;
  s.host.memory_swap = h.memory_swap;
  s.host.nano_cpus = h.nano_cpus;
  s.host.readonly_rootfs = h.readonly_rootfs;
  s.host.tmpfs = h.tmpfs;
  s.host.init = h.init;
  s.host.dns_options = c.dns_options;
  s.host.dns = c.dns;
  for (const auto& m : h.mounts) {
    engine::VolumeMount v;
    v.source = m.volume;
    v.target = m.target;
    v.read_only = m.read_only;
    // A named volume is forgectl's helper: never filled from the image (a trojan /.forgectl).
    v.no_copy = !m.volume.empty();
    if (!m.tmpfs_options.empty()) {
      v.driver = "local";
      v.driver_options = tmpfs_driver_options(m.tmpfs_options);
      v.labels = labels.for_object("volume");
    }
    s.host.mounts.push_back(std::move(v));
  }
  if (h.storage_opt && h.writable_layer_limit > 0)
    s.host.storage_opt = {{"size", std::to_string(h.writable_layer_limit)}};
  s.host.runtime = h.runtime;
  if (!c.networks.empty()) {
    s.network = network_names.at(c.networks.front().network_key);
    s.aliases = c.networks.front().aliases;
    s.ipv4_address = c.networks.front().ipv4;
  } else if (!c.netns_container.empty()) {
    s.host.network_mode = "container:" + c.netns_container;
  } else {
    s.host.network_mode = "none";  // never the daemon's default bridge: a stack without networks has none
  }
  return s;
}

std::map<std::string, std::string> tmpfs_driver_options(const std::string& o) {
  return {{"type", "tmpfs"}, {"device", "tmpfs"}, {"o", o}};
}

policy::Hardening applied_hardening(const engine::ContainerInfo& info,
                                    const std::map<std::string, std::map<std::string, std::string>>& volume_options) {
  policy::Hardening h;
  const auto& host = info.host;
  h.cap_drop = host.cap_drop;
  h.cap_add = host.cap_add;
  h.no_new_privileges = std::any_of(host.security_opt.begin(), host.security_opt.end(), [](const std::string& o) {
    return o == "no-new-privileges" || o == "no-new-privileges:true" || o == "no-new-privileges=true";
  });
  h.pids_limit = host.pids_limit;
  h.memory = host.memory;
  h.memory_swap = host.memory_swap;
  h.nano_cpus = host.nano_cpus;
  h.readonly_rootfs = host.readonly_rootfs;
  h.tmpfs = host.tmpfs;
  h.init = host.init;
  h.user = info.user;
  for (const auto& m : info.mounts) {
    if (m.type != "volume") continue;
    policy::MountSpec a{m.destination, m.name, !m.rw, ""};
    if (auto it = volume_options.find(m.name); it != volume_options.end()) {
      const auto& o = it->second;
      auto get = [&](const char* k) { return o.count(k) ? o.at(k) : std::string(); };
      if (get("type") == "tmpfs" && get("device") == "tmpfs") a.tmpfs_options = get("o");
    }
    h.mounts.push_back(std::move(a));
  }
  if (auto it = host.storage_opt.find("size"); it != host.storage_opt.end()) {
    h.storage_opt = true;
    h.writable_layer_limit = std::strtoll(it->second.c_str(), nullptr, 10);
  }
  h.runtime = host.runtime;
  return h;
}

}  // namespace forge::stack
