// Kill-by-token: a /proc scan for an environment entry or a helper's --token argument.
#include "helper/kill_token.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace forge::helper {

namespace {

constexpr int kKillScanRounds = 3;
constexpr std::size_t kMaxProcFile = 4u << 20;

// The whole of /proc/PID/NAME, or empty when it cannot be read (gone, another uid, not dumpable).
std::string read_proc(const char* pid, const char* name) {
  const std::string path = std::string("/proc/") + pid + "/" + name;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string data;
  char buf[8192];
  while (data.size() < kMaxProcFile) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return data;
}

// The NUL-separated strings of an environ or cmdline file.
std::vector<std::string_view> strings_of(const std::string& data) {
  std::vector<std::string_view> out;
  for (size_t pos = 0; pos < data.size();) {
    size_t end = data.find('\0', pos);
    if (end == std::string::npos) end = data.size();
    out.emplace_back(data.data() + pos, end - pos);
    pos = end + 1;
  }
  return out;
}

bool environ_has(const char* pid, const std::string& entry) {
  const std::string data = read_proc(pid, "environ");  // outlives the views into it
  for (std::string_view s : strings_of(data))
    if (s == entry) return true;
  return false;
}

bool cmdline_has_token(const char* pid, const std::string& token) {
  const std::string data = read_proc(pid, "cmdline");
  const auto args = strings_of(data);
  for (size_t i = 0; i + 1 < args.size() && args[i] != "--"; ++i)  // options only, not the command's
    if (args[i] == "--token" && args[i + 1] == token) return true;
  return false;
}

template <typename Pred>
std::vector<pid_t> scan(Pred matches) {
  std::vector<pid_t> found;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return found;
  const pid_t self = getpid();
  while (const dirent* de = readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(de->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == self) continue;
    if (matches(de->d_name)) found.push_back(static_cast<pid_t>(pid));
  }
  closedir(dir);
  return found;
}

// One /proc pass: SIGKILL token holders not already in `killed`; returns how many were newly killed.
int kill_token_once(const std::string& token, std::vector<pid_t>& killed) {
  int count = 0;
  for (const pid_t pid : token_holders(token)) {
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
  return scan([&](const char* pid) { return environ_has(pid, entry); });
}

std::vector<pid_t> token_holders(const std::string& token) {
  const std::string entry = std::string(kTokenVar) + "=" + token;
  return scan([&](const char* pid) { return environ_has(pid, entry) || cmdline_has_token(pid, token); });
}

// Rescans because a token holder may have been mid-fork during the previous pass.
int kill_token(const std::string& token) {
  std::vector<pid_t> killed;
  int total = 0;
  for (int round = 0; round < kKillScanRounds; ++round) {
    const int n = kill_token_once(token, killed);
    if (n == 0) break;
    total += n;
  }
  return total;
}

namespace {

struct ProcStat {
  pid_t ppid = 0;
  unsigned long long start = 0;  // clock ticks after boot
};

// /proc/PID/stat's parent and start time (fields 4 and 22), read after the command's name,
// which may itself hold spaces and parentheses.
bool proc_stat(const char* pid, ProcStat* out) {
  const std::string data = read_proc(pid, "stat");
  const size_t close = data.rfind(')');
  if (close == std::string::npos) return false;
  std::vector<std::string> f;
  for (size_t pos = close + 2; pos < data.size() && f.size() < 20;) {
    size_t end = data.find(' ', pos);
    if (end == std::string::npos) end = data.size();
    f.push_back(data.substr(pos, end - pos));
    pos = end + 1;
  }
  if (f.size() < 20) return false;  // f[0] is field 3 (state)
  out->ppid = static_cast<pid_t>(std::strtol(f[1].c_str(), nullptr, 10));
  out->start = std::strtoull(f[19].c_str(), nullptr, 10);
  return true;
}

// The container's own command, which must outlive the agent's processes: pid 1, or, under
// Docker's init (pid 1 is docker-init or tini), init's first child, the one started earliest:
// no process the agent starts can be older.
pid_t container_command() {
  const std::string init = read_proc("1", "cmdline");
  const std::string argv0 = init.substr(0, init.find('\0'));
  const std::string base = argv0.substr(argv0.rfind('/') == std::string::npos ? 0 : argv0.rfind('/') + 1);
  if (base != "docker-init" && base != "tini") return 1;
  pid_t best = 1;
  unsigned long long earliest = ~0ull;
  char name[16];
  for (const pid_t pid : scan([](const char*) { return true; })) {
    std::snprintf(name, sizeof name, "%d", static_cast<int>(pid));
    ProcStat st;
    if (proc_stat(name, &st) && st.ppid == 1 && st.start < earliest) best = pid, earliest = st.start;
  }
  return best;
}

}  // namespace

int kill_all() {
  const pid_t spare = container_command();
  int killed = 0;
  for (int round = 0; round < kKillScanRounds; ++round) {
    int sent = 0;
    for (const pid_t pid : scan([](const char*) { return true; }))      // never ourselves
      if (pid != 1 && pid != spare && kill(pid, SIGKILL) == 0) ++sent;  // another uid's: EPERM
    if (sent == 0) break;
    killed += sent;
    usleep(20000);  // a child forked while the signals went out is caught by the next round
  }
  return killed;
}

}  // namespace forge::helper
