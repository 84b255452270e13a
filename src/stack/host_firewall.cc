// Host firewall rules through the iptables command.
#include "stack/host_firewall.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <thread>

#include "core/strings.h"
#include "core/subprocess.h"
#include "policy/firewall.h"

namespace forge::stack {

Status close_host(const std::string& bridge, const std::string& stack) {
  auto rules = policy::firewall_add(bridge, stack);
  for (std::size_t i = 0; i < rules.size(); ++i) {
    bool v4 = i == 0;
    auto r = run_process(rules[i]);
    if (!r || r->exit_code != 0) {
      if (!v4) continue;
      std::string why = r ? trim(r->err) : r.error().what();
      return fail(Errc::kUnsupported, "cannot add the host firewall rule for bridge " + bridge + " (" + why +
                                          "); forgectl needs root and iptables on the daemon's host to close the host "
                                          "to task networks, or FORGECTL_HOST_FIREWALL=off to run without");
    }
  }
  return {};
}

// iptables exits 4 when it could not get the xtables lock in time (busy with dockerd or other
// stacks); that is worth another try, unlike 1 ("no such rule").
constexpr int kXtablesLockBusy = 4;

Status reopen_host(const std::string& bridge, const std::string& stack) {
  auto rules = policy::firewall_delete(bridge, stack);
  for (std::size_t i = 0; i < rules.size(); ++i) {
    bool v4 = i == 0;
    // Delete every copy (a rule added twice would otherwise survive); stop when none is left.
    int busy = 0;
    for (int deleted = 0; deleted < 8;) {
      auto r = run_process(rules[i]);
      if (r && r->exit_code == 0) {
        ++deleted;
        continue;
      }
      if (r && r->exit_code == kXtablesLockBusy && ++busy < 5) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50 * busy));
        continue;
      }
      if (v4 && r && r->exit_code == kXtablesLockBusy)
        return fail(Errc::kUnavailable, "could not remove the host firewall rule for bridge " + bridge +
                                            ": the xtables lock stayed busy; remove it with: iptables -D INPUT " +
                                            "-i " + bridge + " ... --comment forgectl:" + stack);
      break;
    }
  }
  return {};
}

Result<std::vector<std::string>> remove_stale_host_rules(const std::set<std::string>& removed,
                                                         const std::string& net_dir) {
  std::set<std::string> stacks;
  for (const char* tool : {"iptables", "ip6tables"}) {
    auto listed = run_process({tool, "-w", "5", "-S", "INPUT"});
    const bool v4 = std::string_view(tool) == "iptables";
    if (!listed || listed->exit_code != 0) {
      if (!v4) continue;  // no ip6tables, or IPv6 off: nothing of ours there
      return fail(Errc::kUnavailable,
                  "listing the host firewall's INPUT rules: " + (listed ? trim(listed->err) : listed.error().what()));
    }
    for (const auto& r : policy::forgectl_rules(listed->out)) {
      std::error_code ec;
      if (!removed.count(r.stack) && (std::filesystem::exists(std::filesystem::path(net_dir) / r.bridge, ec) || ec))
        continue;
      if (auto st = reopen_host(r.bridge, r.stack); !st) return st.fail();
      stacks.insert(r.stack);
    }
  }
  return std::vector<std::string>(stacks.begin(), stacks.end());
}

}  // namespace forge::stack
