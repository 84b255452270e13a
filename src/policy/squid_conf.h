// squid.conf for the limited_internet egress sidecar: default deny, CONNECT only to allowlisted hosts.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"

namespace forge::policy {

inline constexpr int kProxyPort = 3128;
// The sidecar's alias on the internal network, and its visible_hostname.
inline constexpr const char* kProxyAlias = "egress-proxy";
// squid runs as proxy:proxy (13:13 in Debian, Ubuntu and forgectl/squid:local): started as root it
// cannot open the container's stdout, and under cap_drop ALL it crashes changing user.
inline constexpr const char* kSquidUser = "13:13";
// Where both proxy images read their configuration.
inline constexpr const char* kSquidConfDir = "/etc/squid";
inline constexpr const char* kSquidConfPath = "/etc/squid/squid.conf";

struct SquidOptions {
  std::string internal_subnet;         // CIDR of the task network: the only allowed clients
  std::vector<std::string> allowlist;  // from normalise_allowlist()
  bool deny_private = true;            // refuse RFC 1918 / CGNAT / ULA destinations (off only for local tests)
  bool allow_plain_http = false;       // also GET/HEAD over plain HTTP to allowlisted hosts on port 80
  std::vector<int> connect_ports{443};
  // CIDR of the stack's upstream network (the task's own test-only hosts), exempt from
  // deny_private, and its gateway (the host's side of that bridge), which stays refused; empty: none.
  std::string upstream_subnet, upstream_gateway;
  // A full_internet phase's config for a runner that keeps the proxy variables (a Harbor public
  // step beside allowlist steps): any host, port and method; loopback, link-local and (with
  // deny_private) private destinations still refused. The allowlist and ports are not used.
  bool open = false;
};

// Checks what squid_conf() relies on: a CIDR subnet, normalised allowlist entries (nothing that
// could inject configuration), ports 1-65535 and at least one of them. kInvalid otherwise.
Status check_squid_options(const SquidOptions& opts);

// The configuration text (reference/egress.md §1). Works unchanged with squid 5.x and 6.x, with
// logs on stdout (access, `egress` format) and stderr (cache log), and nothing written to disk.
// Expects options that passed check_squid_options().
std::string squid_conf(const SquidOptions& opts);

}  // namespace forge::policy
