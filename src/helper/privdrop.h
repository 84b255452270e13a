// Dropping to an unprivileged uid:gid for good: groups, ids, every capability set, no_new_privs,
// then a check that each of them took (docs/helper-protocol.md, "Privilege drop").
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

namespace forge::helper {

inline constexpr std::size_t kMaxGroups = 64;

struct DropSpec {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary; empty: none
};

// "UID:GID", both decimal, neither 0 (dropping to root would keep root's files open to the
// command). False with `*error` set on anything else.
bool parse_uid_gid(std::string_view text, DropSpec* out, std::string* error);
// "G1,G2,…": at most kMaxGroups decimal ids, none 0.
bool parse_groups(std::string_view text, std::vector<gid_t>* out, std::string* error);
// One decimal id below 2^32-1 (the kernel's "no id").
bool parse_id(std::string_view text, unsigned* out);

// setgroups, setresgid, setresuid, clears the effective/permitted/inheritable/ambient
// capabilities, sets no_new_privs and keeps the process non-dumpable; then verifies all of it
// through getres[ug]id, getgroups, capget, prctl and /proc/self/status (its lines where present:
// gVisor's has no NoNewPrivs). False with `*error` saying what
// did not take; the process must then not go on (its ids may be half changed). Works from root
// holding only CAP_SETUID and CAP_SETGID, and from a process already running as the target ids
// (then it only clears and verifies). Single-threaded callers only (it may run after fork).
bool drop_privileges(const DropSpec& spec, std::string* error);

// "1000:1000" or "1000:1000 (groups 20,30)" for messages.
std::string describe(const DropSpec& spec);

}  // namespace forge::helper
