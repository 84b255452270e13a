// Ending an exec from the daemon's host: SIGKILL its whole session, when the daemon is local.
#pragma once

#include <dirent.h>
#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace forge::engine {

namespace host_kill_detail {
// The whole of a small /proc file; empty when unreadable.
inline std::string read_proc(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
}  // namespace host_kill_detail

// SIGKILLs every host process in session `sid` (an exec's host Pid: every exec leads its own
// session) that belongs to `container_id`'s cgroup. The cgroup check matters: if our PID
// namespace is not the daemon's, `sid` may name an unrelated process of ours, and then nothing
// matches and nothing is killed. Returns how many were signalled.
inline int kill_host_session(int sid, const std::string& container_id) {
  if (sid <= 1 || container_id.empty()) return 0;
  int killed = 0;
  DIR* proc = opendir("/proc");
  if (!proc) return 0;
  while (dirent* e = readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (*end || pid <= 1) continue;
    std::string base = std::string("/proc/") + e->d_name;
    std::string stat = host_kill_detail::read_proc(base + "/stat");
    auto close_paren = stat.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream rest(stat.substr(close_paren + 2));
    std::string state;
    long ppid = 0, pgrp = 0, session = 0;
    rest >> state >> ppid >> pgrp >> session;
    if (session != sid) continue;
    if (host_kill_detail::read_proc(base + "/cgroup").find(container_id) == std::string::npos) continue;
    if (::kill(static_cast<pid_t>(pid), SIGKILL) == 0) ++killed;
  }
  closedir(proc);
  return killed;
}

}  // namespace forge::engine
