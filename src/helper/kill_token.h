// Finding and killing processes by a token in their environment: catches descendants that left
// their process group (setsid, setpgid) and would otherwise outlive a deadline.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace forge::helper {

inline constexpr char kTokenVar[] = "FORGECTL_EXEC_TOKEN";

// PIDs (not ours) whose /proc/PID/environ holds exactly `entry` ("K=V"); processes of other
// users, and non-dumpable ones (a helper), whose environ we cannot read, are not seen.
std::vector<pid_t> env_holders(const std::string& entry);

// PIDs (not ours) carrying `token`: FORGECTL_EXEC_TOKEN=`token` in their environment, or the
// arguments "--token" `token` on their command line (a helper's own, which stays readable after
// the helper made itself non-dumpable).
std::vector<pid_t> token_holders(const std::string& token);

// SIGKILLs every process token_holders finds (rescanning for ones mid-fork); returns how many.
int kill_token(const std::string& token);

// SIGKILLs every process this uid may signal but itself, pid 1 and the container's own command
// (init's oldest child under Docker's init), rescanning for ones mid-fork: what the agent left
// running when its phase ended, whatever group, session or environment it moved to. Returns how
// many signals were sent (a zombie counts each round: it is its parent's to reap).
int kill_all();

}  // namespace forge::helper
