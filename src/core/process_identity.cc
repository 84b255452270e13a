// Process identities from /proc.
#include "core/process_identity.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace forge {

std::optional<unsigned long long> process_start_ticks(long pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(f, stat)) return std::nullopt;
  auto paren = stat.rfind(')');  // the command name may contain spaces and parentheses
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream rest(stat.substr(paren + 2));
  std::string field;
  // Field 3 (state) is the first after the name; start time is field 22.
  for (int i = 3; i < 22; ++i) rest >> field;
  unsigned long long ticks = 0;
  if (!(rest >> ticks)) return std::nullopt;
  return ticks;
}

static std::string host_name() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

ProcessIdentity ProcessIdentity::current() {
  ProcessIdentity id;
  id.host = host_name();
  id.pid = ::getpid();
  id.start_ticks = process_start_ticks(id.pid).value_or(0);
  return id;
}

std::string ProcessIdentity::str() const { return host + ":" + std::to_string(pid) + ":" + std::to_string(start_ticks); }

std::optional<ProcessIdentity> ProcessIdentity::parse(std::string_view s) {
  auto last = s.rfind(':');
  if (last == std::string_view::npos) return std::nullopt;
  auto mid = s.rfind(':', last - 1);
  if (mid == std::string_view::npos || mid == 0) return std::nullopt;
  ProcessIdentity id;
  id.host = std::string(s.substr(0, mid));
  try {
    id.pid = std::stol(std::string(s.substr(mid + 1, last - mid - 1)));
    id.start_ticks = std::stoull(std::string(s.substr(last + 1)));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return id;
}

ProcessIdentity::Liveness ProcessIdentity::liveness() const {
  if (host != host_name()) return Liveness::kUnknown;
  auto ticks = process_start_ticks(pid);
  return ticks && *ticks == start_ticks ? Liveness::kAlive : Liveness::kDead;
}

}  // namespace forge
