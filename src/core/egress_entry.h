// One line of a trial's egress ledger (egress.jsonl in the trial's directory): a DNS query the
// trial's resolver answered or refused, or a request through the egress proxy. Written by the
// trial layer from the resolver's and the proxy's logs, read by grading (the `egress` component),
// `forgectl show` and the trial page.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace forge {

// A trial's ledger keeps at most this many entries; what comes after is counted, not kept.
inline constexpr std::size_t kMaxEgressEntries = 10000;
inline constexpr std::size_t kMaxEgressLineBytes = 4096;  // a longer line is cut (its name or path)
inline constexpr std::size_t kMaxEgressAnswers = 64;      // a DNS entry keeps at most this many answers

enum class EgressKind { kDns, kHttp };

struct EgressEntry {
  EgressKind kind = EgressKind::kDns;
  std::int64_t t_ms = 0;     // Unix time in milliseconds, as the resolver or the proxy logged it
  std::string phase;         // "setup" | "agent" | "grade" | "" (outside any phase: between them)
  std::string from;          // who asked: "runner", a service's name, "verifier", or its address
  // What was asked: DNS: the name (lower case, no trailing dot); HTTP: the host (CONNECT's or the URL's).
  std::string host;
  // DNS: the query type ("A", "AAAA", "TXT", …, or the number). HTTP: the method.
  std::string what;
  std::uint16_t port = 0;    // HTTP only
  std::string path;          // plain HTTP only ("/x?y"); CONNECT tunnels show none
  // "answered" | "refused" (DNS); "allowed" | "denied" (HTTP: the proxy's decision).
  std::string outcome;
  std::vector<std::string> answers;  // DNS: the addresses answered
  int status = 0;                    // HTTP: the status the proxy gave the client
  std::int64_t bytes_out = 0, bytes_in = 0;  // HTTP: client → proxy, proxy → client

  bool blocked() const { return outcome == "refused" || outcome == "denied"; }
};

struct EgressLedger {
  std::vector<EgressEntry> entries;  // in time order
  std::size_t dropped = 0;           // entries past kMaxEgressEntries (or unreadable lines), not kept
};

const char* egress_kind_name(EgressKind k);
// One JSON object, no newline: {"t":…,"phase":…,"kind":"dns"|"http",…}.
std::string egress_line(const EgressEntry& e);
// The ledger file's text: one line per entry, then {"kind":"dropped","count":N} when N > 0.
std::string egress_jsonl(const EgressLedger& l);
// Parses egress_jsonl's text. Lines that do not parse are counted in `dropped`, never fatal: a
// ledger is evidence, and a broken line must not hide the rest. More than kMaxEgressEntries lines
// are counted, not kept.
EgressLedger parse_egress_jsonl(std::string_view text);
// One line per entry for people: "agent dns  A evil.example refused (runner)".
std::string egress_summary_line(const EgressEntry& e);

}  // namespace forge
