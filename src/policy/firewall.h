// Host firewall rules that close the host to a stack's networks. Docker leaves the bridge's own
// address answering for every host service on an internal network; one INPUT rule per bridge,
// owned by forgectl and removed with the network, closes it.
#pragma once

#include <string>
#include <vector>

namespace forge::policy {

using Argv = std::vector<std::string>;

// The comment that marks a rule as forgectl's, for one stack.
std::string firewall_comment(const std::string& stack);
// iptables/ip6tables commands adding (and removing) the rule for `bridge`. New connections from
// the bridge to the host are dropped; replies to connections the host opened still pass.
std::vector<Argv> firewall_add(const std::string& bridge, const std::string& stack);
std::vector<Argv> firewall_delete(const std::string& bridge, const std::string& stack);

}  // namespace forge::policy
