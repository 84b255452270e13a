// Host firewall rules per bridge.
#include "policy/firewall.h"

#include <cctype>

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

std::vector<HostRule> forgectl_rules(std::string_view listing) {
  const std::string prefix = firewall_comment("");
  std::vector<HostRule> out;
  while (!listing.empty()) {
    std::size_t nl = listing.find('\n');
    std::string_view line = listing.substr(0, nl);
    listing = nl == std::string_view::npos ? std::string_view() : listing.substr(nl + 1);
    std::vector<std::string_view> words;
    for (std::size_t at = 0; at < line.size();) {
      std::size_t end = line.find(' ', at);
      if (end == std::string_view::npos) end = line.size();
      if (end > at) words.push_back(line.substr(at, end - at));
      at = end + 1;
    }
    HostRule r;
    for (std::size_t i = 0; i + 1 < words.size(); ++i) {
      if (words[i] == "-i") r.bridge = words[i + 1];
      if (words[i] != "--comment") continue;
      std::string_view c = words[i + 1];
      if (c.size() >= 2 && c.front() == '"' && c.back() == '"') c = c.substr(1, c.size() - 2);
      if (c.substr(0, prefix.size()) == prefix) r.stack = c.substr(prefix.size());
    }
    // An interface name (at most 15 of these characters), never a wildcard or a path.
    bool name_ok = !r.bridge.empty() && r.bridge.size() <= 15 && r.bridge != "." && r.bridge != "..";
    for (char ch : r.bridge)
      name_ok = name_ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.');
    if (name_ok && !r.stack.empty()) out.push_back(std::move(r));
  }
  return out;
}

}  // namespace forge::policy
