// Host firewall rules per bridge.
#include "policy/firewall.h"

namespace forge::policy {

std::string firewall_comment(const std::string& stack) { return "forgectl:" + stack; }

static Argv rule(const char* tool, const char* op, const std::string& bridge, const std::string& stack) {
  // -w waits for the xtables lock instead of failing when dockerd holds it.
  return {tool, "-w", "5", op, "INPUT", "-i", bridge, "-m", "conntrack", "!", "--ctstate", "ESTABLISHED,RELATED",
          "-m", "comment", "--comment", firewall_comment(stack), "-j", "DROP"};
}

std::vector<Argv> firewall_add(const std::string& bridge, const std::string& stack) {
  return {rule("iptables", "-I", bridge, stack), rule("ip6tables", "-I", bridge, stack)};
}

std::vector<Argv> firewall_delete(const std::string& bridge, const std::string& stack) {
  return {rule("iptables", "-D", bridge, stack), rule("ip6tables", "-D", bridge, stack)};
}

}  // namespace forge::policy
