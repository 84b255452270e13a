// Host firewall rules that close the host to a stack's networks. Docker leaves the bridge's own
// address answering for every host service on an internal network; one INPUT rule per bridge,
// owned by forgectl and removed with the network, closes it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace forge::policy {

using Argv = std::vector<std::string>;

// The comment that marks a rule as forgectl's, for one stack.
std::string firewall_comment(const std::string& stack);
// iptables/ip6tables commands adding (and removing) the rule for `bridge`. New connections from
// the bridge to the host are dropped; replies to connections the host opened still pass.
std::vector<Argv> firewall_add(const std::string& bridge, const std::string& stack);
std::vector<Argv> firewall_delete(const std::string& bridge, const std::string& stack);

// A forgectl rule as `iptables -S INPUT` lists it.
struct HostRule {
  std::string bridge, stack;
  bool operator==(const HostRule&) const = default;
};
// forgectl's rules in the text of `iptables -S INPUT` (or ip6tables'): lines with `-i BRIDGE` and
// a `--comment` of firewall_comment's form, quoted or not. Other lines are left out.
std::vector<HostRule> forgectl_rules(std::string_view listing);

}  // namespace forge::policy
