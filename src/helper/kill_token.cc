// Kill-by-token: a /proc scan for an environment entry.
#include "helper/kill_token.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>

namespace forge::helper {

namespace {

constexpr int kKillScanRounds = 3;

// True if /proc/PID/environ holds exactly `entry` as one of its NUL-separated strings.
bool environ_has(const char* pid, const std::string& entry) {
  const std::string path = std::string("/proc/") + pid + "/environ";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // gone, or another uid's process we could not kill anyway
  std::string env;
  char buf[8192];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    env.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  for (size_t pos = 0; pos < env.size();) {
    size_t end = env.find('\0', pos);
    if (end == std::string::npos) end = env.size();
    if (end - pos == entry.size() && env.compare(pos, entry.size(), entry) == 0) return true;
    pos = end + 1;
  }
  return false;
}

// One /proc pass: SIGKILL token holders not already in `killed`; returns how many were newly killed.
int kill_token_once(const std::string& entry, std::vector<pid_t>& killed) {
  int count = 0;
  for (const pid_t pid : env_holders(entry)) {
    bool seen = false;
    for (const pid_t k : killed) seen = seen || k == pid;
    if (seen) continue;
    if (kill(pid, SIGKILL) == 0) {
      killed.push_back(pid);
      ++count;
    }
  }
  return count;
}

}  // namespace

std::vector<pid_t> env_holders(const std::string& entry) {
  std::vector<pid_t> found;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return found;
  const pid_t self = getpid();
  while (const dirent* de = readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(de->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == self) continue;
    if (environ_has(de->d_name, entry)) found.push_back(static_cast<pid_t>(pid));
  }
  closedir(dir);
  return found;
}

// Rescans because a token holder may have been mid-fork during the previous pass.
int kill_token(const std::string& token) {
  const std::string entry = std::string(kTokenVar) + "=" + token;
  std::vector<pid_t> killed;
  int total = 0;
  for (int round = 0; round < kKillScanRounds; ++round) {
    const int n = kill_token_once(entry, killed);
    if (n == 0) break;
    total += n;
  }
  return total;
}

}  // namespace forge::helper
