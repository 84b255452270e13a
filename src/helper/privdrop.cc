// The privilege drop: raw syscalls (no libcap, so the helper stays static and self-contained).
#include "helper/privdrop.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#endif
#ifndef PR_CAP_AMBIENT_CLEAR_ALL
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

namespace forge::helper {

namespace {

constexpr unsigned kNoId = 0xffffffffu;  // (uid_t)-1: "leave unchanged" to set*id, never an id

bool fail(std::string* error, std::string message) {
  *error = std::move(message);
  return false;
}

bool fail_errno(std::string* error, const std::string& call) { return fail(error, call + ": " + std::strerror(errno)); }

std::vector<gid_t> current_groups() {
  const int n = getgroups(0, nullptr);
  std::vector<gid_t> g(n > 0 ? static_cast<std::size_t>(n) : 0);
  if (n > 0 && getgroups(n, g.data()) != n) g.clear();
  return g;
}

// The primary gid in the list grants nothing more, and Docker may put it there for a numeric user.
std::vector<gid_t> normalised(std::vector<gid_t> g, gid_t primary) {
  g.erase(std::remove(g.begin(), g.end(), primary), g.end());
  std::sort(g.begin(), g.end());
  g.erase(std::unique(g.begin(), g.end()), g.end());
  return g;
}

std::string ids_text(const std::vector<gid_t>& g) {
  std::string s;
  for (gid_t x : g) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s.empty() ? "none" : s;
}

std::string read_status() {
  const int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string s;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || s.size() > 65536) break;
    s.append(buf, static_cast<std::size_t>(n));
  }
  close(fd);
  return s;
}

// The value after "Key:" on its line of /proc/self/status, tabs turned into spaces; empty if absent.
std::string status_field(const std::string& status, std::string_view key) {
  const std::string needle = "\n" + std::string(key) + ":";
  std::string padded = "\n" + status;
  const std::size_t at = padded.find(needle);
  if (at == std::string::npos) return {};
  std::size_t begin = at + needle.size();
  const std::size_t end = padded.find('\n', begin);
  std::string v = padded.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  std::replace(v.begin(), v.end(), '\t', ' ');
  const std::size_t first = v.find_first_not_of(' ');
  return first == std::string::npos ? std::string() : v.substr(first);
}

bool zero_hex(const std::string& v) { return !v.empty() && v.find_first_not_of('0') == std::string::npos; }

// A failed set*id as root means a missing capability: say which ones the helper needs.
bool fail_setid(std::string* error, const std::string& call) {
  const bool hint = errno == EPERM && geteuid() == 0;
  fail_errno(error, call);
  if (hint) *error += " (as root the helper needs CAP_SETUID and CAP_SETGID in its bounding set)";
  return false;
}

bool set_ids(const DropSpec& spec, std::string* error) {
  const std::vector<gid_t> want = normalised(spec.groups, spec.gid);
  // Already right (a helper started as the target user): setgroups would need CAP_SETGID.
  if (normalised(current_groups(), spec.gid) != want &&
      setgroups(spec.groups.size(), spec.groups.empty() ? nullptr : spec.groups.data()) != 0)
    return fail_setid(error, "setgroups(" + ids_text(spec.groups) + ")");
  if (setresgid(spec.gid, spec.gid, spec.gid) != 0)
    return fail_setid(error, "setresgid(" + std::to_string(spec.gid) + ")");
  (void)prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);  // capabilities must not survive the uid change
  if (setresuid(spec.uid, spec.uid, spec.uid) != 0)
    return fail_setid(error, "setresuid(" + std::to_string(spec.uid) + ")");
  return true;
}

bool clear_capabilities(std::string* error) {
  __user_cap_header_struct head{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capset, &head, data) != 0) return fail_errno(error, "capset(all empty)");
  // EINVAL: a kernel before 4.3 has no ambient set to clear.
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
    return fail_errno(error, "prctl(PR_CAP_AMBIENT_CLEAR_ALL)");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return fail_errno(error, "prctl(PR_SET_NO_NEW_PRIVS)");
  // A uid change resets dumpable to fs.suid_dumpable, which may be 1: set it again.
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return fail_errno(error, "prctl(PR_SET_DUMPABLE, 0)");
  return true;
}

bool verify(const DropSpec& spec, std::string* error) {
  uid_t ru, eu, su;
  gid_t rg, eg, sg;
  if (getresuid(&ru, &eu, &su) != 0 || getresgid(&rg, &eg, &sg) != 0) return fail_errno(error, "getresuid");
  if (ru != spec.uid || eu != spec.uid || su != spec.uid || rg != spec.gid || eg != spec.gid || sg != spec.gid)
    return fail(error, "ids did not take: uid " + std::to_string(ru) + "/" + std::to_string(eu) + "/" +
                           std::to_string(su) + ", gid " + std::to_string(rg) + "/" + std::to_string(eg) + "/" +
                           std::to_string(sg));
  if (normalised(current_groups(), spec.gid) != normalised(spec.groups, spec.gid))
    return fail(error, "supplementary groups did not take: " + ids_text(current_groups()));

  __user_cap_header_struct head{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capget, &head, data) != 0) return fail_errno(error, "capget");
  for (const auto& d : data)
    if (d.effective != 0 || d.permitted != 0 || d.inheritable != 0)
      return fail(error, "capget still shows capabilities");
  if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) return fail(error, "no_new_privs is not set");
  if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0) return fail(error, "the process is still dumpable");

  // The kernel's own account, independent of the calls above.
  const std::string status = read_status();
  if (status.empty()) return fail(error, "cannot read /proc/self/status to verify the drop (is /proc mounted?)");
  const std::string u = std::to_string(spec.uid), g = std::to_string(spec.gid);
  if (status_field(status, "Uid") != u + " " + u + " " + u + " " + u)
    return fail(error, "/proc/self/status shows Uid: " + status_field(status, "Uid"));
  if (status_field(status, "Gid") != g + " " + g + " " + g + " " + g)
    return fail(error, "/proc/self/status shows Gid: " + status_field(status, "Gid"));
  for (const char* key : {"CapInh", "CapPrm", "CapEff"})
    if (!zero_hex(status_field(status, key)))
      return fail(error, std::string("/proc/self/status shows ") + key + ": " + status_field(status, key));
  const std::string amb = status_field(status, "CapAmb");  // absent before Linux 4.3
  if (!amb.empty() && !zero_hex(amb)) return fail(error, "/proc/self/status shows CapAmb: " + amb);
  // prctl above is the source of truth; gVisor's /proc/self/status has no NoNewPrivs line at all, so
  // only a line that is there and says otherwise is a failure.
  const std::string nnp = status_field(status, "NoNewPrivs");
  if (!nnp.empty() && nnp != "1") return fail(error, "/proc/self/status shows NoNewPrivs: " + nnp);

  // Last: there is no way back to root.
  if (setresuid(kNoId, 0, kNoId) == 0 || setresgid(kNoId, 0, kNoId) == 0)
    return fail(error, "could switch back to uid or gid 0 after the drop");
  return true;
}

}  // namespace

bool parse_id(std::string_view text, unsigned* out) {
  if (text.empty() || text.size() > 10) return false;
  unsigned long long v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v >= kNoId) return false;
  *out = static_cast<unsigned>(v);
  return true;
}

bool parse_uid_gid(std::string_view text, DropSpec* out, std::string* error) {
  const std::size_t colon = text.find(':');
  unsigned uid = 0, gid = 0;
  if (colon == std::string_view::npos || !parse_id(text.substr(0, colon), &uid) ||
      !parse_id(text.substr(colon + 1), &gid))
    return fail(error, "'" + std::string(text) + "' is not UID:GID (two decimal ids)");
  if (uid == 0 || gid == 0) return fail(error, "'" + std::string(text) + "' names root; the point is to leave it");
  out->uid = uid;
  out->gid = gid;
  return true;
}

bool parse_groups(std::string_view text, std::vector<gid_t>* out, std::string* error) {
  std::vector<gid_t> g;
  for (std::size_t pos = 0;;) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    unsigned id = 0;
    const std::string_view item = text.substr(pos, comma - pos);
    if (!parse_id(item, &id))
      return fail(error, "'" + std::string(item) + "' in '" + std::string(text) + "' is not a group id");
    if (id == 0) return fail(error, "group 0 (root) is refused");
    if (g.size() == kMaxGroups) return fail(error, "more than " + std::to_string(kMaxGroups) + " groups");
    g.push_back(id);
    if (comma == text.size()) break;
    pos = comma + 1;
  }
  *out = std::move(g);
  return true;
}

bool drop_privileges(const DropSpec& spec, std::string* error) {
  if (spec.uid == 0 || spec.gid == 0) return fail(error, "refusing to drop to root");
  return set_ids(spec, error) && clear_capabilities(error) && verify(spec, error);
}

std::string describe(const DropSpec& spec) {
  std::string s = std::to_string(spec.uid) + ":" + std::to_string(spec.gid);
  if (!spec.groups.empty()) s += " (groups " + ids_text(spec.groups) + ")";
  return s;
}

}  // namespace forge::helper
