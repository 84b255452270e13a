// Who owns a stack or a reservation: host name, pid and the pid's start time, so a reused pid is
// never mistaken for the owner.
#pragma once

#include <optional>
#include <string>

namespace forge {

struct ProcessIdentity {
  std::string host;
  long pid = 0;
  unsigned long long start_ticks = 0;  // /proc/<pid>/stat field 22

  static ProcessIdentity current();
  // "host:pid:start"; parse() reads it back (nullopt when malformed).
  std::string str() const;
  static std::optional<ProcessIdentity> parse(std::string_view s);

  enum class Liveness { kAlive, kDead, kUnknown };
  // kUnknown for another host's process: only its lease can tell.
  Liveness liveness() const;
};

// The start time of `pid` in clock ticks since boot, or nullopt when it does not exist.
std::optional<unsigned long long> process_start_ticks(long pid);

}  // namespace forge
