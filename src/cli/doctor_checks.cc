// The doctor's judgements.
#include "cli/doctor_checks.h"

#include <cstdlib>

namespace forge::cli {

std::optional<std::string> cve_2024_29018_warning(std::string_view v) {
  std::string s(v);
  char* end = nullptr;
  long major = std::strtol(s.c_str(), &end, 10);
  long minor = *end == '.' ? std::strtol(end + 1, &end, 10) : 0;
  long patch = *end == '.' ? std::strtol(end + 1, &end, 10) : 0;
  bool vulnerable = major < 23 || (major == 23 && minor == 0 && patch < 11) || major == 24 ||
                    (major == 25 && minor == 0 && patch < 5);
  if (!vulnerable || major == 0) return std::nullopt;
  return "engine " + s + " predates the fix for CVE-2024-29018 (23.0.11, 25.0.5, 26.0.0): containers on internal "
         "networks can resolve external names through Docker's embedded DNS, which leaks data by DNS queries. "
         "Upgrade the engine where no_internet must hold against DNS exfiltration.";
}

std::optional<std::string> protected_symlinks_warning(std::string_view value) {
  if (value.empty() || value.front() != '0') return std::nullopt;
  return "fs.protected_symlinks is 0 on this host: in a grader's shared /tmp a test that writes a fixed path "
         "follows a symbolic link a program of the agent's left there (its reward file, say). Set "
         "'sysctl fs.protected_symlinks=1' (most distributions' default).";
}

long default_pool_capacity(const std::vector<engine::AddressPool>& pools) {
  if (pools.empty()) return 31;  // 172.17–31.0.0/16 and 192.168.0.0/20 in /16 and /20 steps, as shipped
  long total = 0;
  for (const auto& p : pools) {
    auto slash = p.base.find('/');
    if (slash == std::string::npos) continue;
    int base_prefix = std::atoi(p.base.c_str() + slash + 1);
    if (p.size >= base_prefix && p.size - base_prefix < 31) total += 1L << (p.size - base_prefix);
  }
  return total;
}

}  // namespace forge::cli
