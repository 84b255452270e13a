// Finding and killing processes by a token in their environment: catches descendants that left
// their process group (setsid, setpgid) and would otherwise outlive a deadline.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace forge::helper {

inline constexpr char kTokenVar[] = "FORGECTL_EXEC_TOKEN";

// PIDs (not ours) whose /proc/PID/environ holds exactly `entry` ("K=V"); processes of other
// users, whose environ we cannot read, are not seen.
std::vector<pid_t> env_holders(const std::string& entry);

// SIGKILLs every process carrying FORGECTL_EXEC_TOKEN=`token`; returns how many were killed.
int kill_token(const std::string& token);

}  // namespace forge::helper
