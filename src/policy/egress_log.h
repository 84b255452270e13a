// The egress ledger from what the trial's resolver and egress proxy log (core/egress_entry.h):
// the resolver's JSON lines and squid's access log in squid_conf's `egress` format, merged in
// time order, each entry given its phase and the name of the container that asked.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/egress_entry.h"

namespace forge::policy {

// When a phase began (Unix ms); an entry belongs to the last phase begun at or before its time.
struct PhaseMark {
  std::int64_t t_ms = 0;
  std::string phase;  // "setup" | "agent" | "grade"
};

// One access-log line: "<t.ms> <client> <method> <url> <status> <squid status>/<hierarchy> <server> <bytes in> <bytes out>".
std::optional<EgressEntry> parse_squid_line(std::string_view line);

struct EgressLogs {
  std::string resolver;  // the resolver's stdout
  std::string proxy;     // the proxy's stdout (its access log)
};

// The trial's ledger: entries of both logs in time order, at most kMaxEgressEntries (the rest
// counted in `dropped`, with the resolver's own count of what it did not log); `who` names a
// source address ("10.231.0.2" → "runner"); an address not in it stays as it is.
EgressLedger egress_ledger(const EgressLogs& logs, const std::vector<PhaseMark>& marks,
                           const std::map<std::string, std::string>& who);

}  // namespace forge::policy
