// Applies the policy layer's firewall rules on this host (iptables), where the daemon is local.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/result.h"

namespace forge::stack {

// HostSettings::host_firewall (FORGECTL_HOST_FIREWALL=off turns host rules off: remote daemons,
// rootless setups).
enum class FirewallMode { kEnforce, kOff };

// Adds the rule closing the host to `bridge`. IPv4 must succeed; IPv6 is best effort (hosts
// without ip6tables or with IPv6 disabled have nothing to close).
Status close_host(const std::string& bridge, const std::string& stack);
// Removes it; a rule already gone is not an error.
Status reopen_host(const std::string& bridge, const std::string& stack);

// Removes forgectl's rules (iptables and ip6tables) whose bridge is gone from this host: what a
// teardown killed between removing a network and its rule leaves. A rule is only ever added once
// its bridge exists, so one without a bridge belongs to no stack, on any daemon of the host.
// Rules of `removed` (stacks this process just tore down) go too, bridge or not: another forgectl
// removing the same stack may have taken its network and not yet its rule, and the daemon can list
// a network as gone a moment before its bridge is. `net_dir` lists the host's interfaces.
// Returns the stacks whose rules were removed.
Result<std::vector<std::string>> remove_stale_host_rules(const std::set<std::string>& removed = {},
                                                         const std::string& net_dir = "/sys/class/net");

}  // namespace forge::stack
