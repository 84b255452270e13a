// `forgectl serve dns`: the trial's only resolver (docs/environment.md "Name resolution"). Every
// container of a closed trial (no_internet, limited_internet) has it as Docker's upstream, so a
// name Docker's embedded DNS does not know (anything but the trial's own containers) comes here:
// under no_internet it refuses every name; under limited_internet it answers A queries for the
// allowlist's exact names and refuses the rest — a wildcard entry's subdomains included, so no
// label an agent chooses leaves the trial in a query (the egress proxy resolves the names it
// connects to itself). Each query is one JSON line on stdout (core/egress_entry.h), which the
// trial reads back into its egress ledger.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/result.h"
#include "services/dns_wire.h"

namespace forge::services {

// Lines logged before the rest are only counted (a flood of queries must not fill the host's disk
// through the container's log); the running count goes out as {"kind":"dropped","total":N} lines.
inline constexpr std::size_t kMaxDnsLogLines = 20000;

// What the resolver answers, switched by the trial between phases (docs/environment.md
// "Per-phase policy"): the allowlist's names, every name (a full_internet phase), or none (a
// no_internet phase of a trial whose other phases are limited_internet).
// A trial whose steps have allowlists of their own has several (kAllowlist answers the first,
// allowlist_mode(k) the k-th).
enum class DnsMode : int { kAllowlist = 0, kOpen = 1, kNone = 2 };
inline constexpr int allowlist_mode(std::size_t k) { return k == 0 ? 0 : 2 + static_cast<int>(k); }
// The log line's word for a mode: "allowlist", "allowlist-2", "open", "none".
std::string dns_mode_word(int mode);

struct DnsPolicy {
  std::vector<std::string> names;  // answered (A only), lower case, exact; empty: refuse everything
  std::vector<std::vector<std::string>> more_names;  // allowlist k's at [k - 1] (k >= 1)
  bool allow_private = false;      // answers in 10/8, 172.16/12, 192.168/16, 100.64/10 (limited_internet_allow_private)
  const std::atomic<int>* mode = nullptr;  // a DnsMode or allowlist_mode(k); none given: kAllowlist
};

// What the resolver answers a query, and how the ledger records it.
struct DnsDecision {
  DnsRcode rcode = DnsRcode::kRefused;
  std::vector<std::string> answers;  // IPv4, for an answered A query
  std::string outcome;               // "answered" | "refused"
};

using DnsLookup = std::function<std::vector<std::string>(const std::string& name)>;  // IPv4 addresses

// Whether an address may be handed to the trial: never loopback, link-local, "this network",
// multicast or reserved; private ranges only with allow_private.
bool dns_answer_allowed(const std::string& ipv4, bool allow_private);
DnsDecision decide_dns(const DnsQuery& q, const DnsPolicy& policy, const DnsLookup& lookup);
// The system's resolver (getaddrinfo, IPv4 only).
std::vector<std::string> system_lookup(const std::string& name);

struct DnsServerOptions {
  std::string host = "0.0.0.0";
  std::uint16_t port = 53;  // 0: any free port (tests)
  DnsPolicy policy;
  DnsLookup lookup = system_lookup;
  std::function<void(std::string_view)> log_line;  // one JSON line per query, without the newline
  // Told, on the server's thread, each time policy.mode is seen to change (and once at start):
  // how the trial learns a switch took effect.
  std::function<void(int mode)> on_mode;
};

class DnsServer {
 public:
  static Result<std::unique_ptr<DnsServer>> start(DnsServerOptions opts);
  ~DnsServer();
  DnsServer(const DnsServer&) = delete;
  DnsServer& operator=(const DnsServer&) = delete;
  std::uint16_t port() const { return port_; }
  void stop();

 private:
  DnsServer(DnsServerOptions opts, int fd, std::uint16_t port);
  void serve();
  void answer(std::string_view packet, const void* from, unsigned from_len);
  void log(std::string_view line);
  void report_dropped(bool final);

  DnsServerOptions opts_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::size_t logged_ = 0, dropped_ = 0, dropped_reported_ = 0;
  std::int64_t last_report_ms_ = 0;
  std::thread thread_;
};

}  // namespace forge::services
