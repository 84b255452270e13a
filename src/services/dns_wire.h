// The little of DNS's wire format (RFC 1035) the trial's resolver speaks: one question in, a
// reply with that question and, at most, IPv4 answers out. Pure functions over bytes; anything
// else in a query (several questions, compression in the question, a name past RFC 1035's
// limits) is malformed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace forge::services {

inline constexpr std::size_t kMaxDnsQueryBytes = 512;  // a UDP query larger than this is malformed
inline constexpr std::size_t kMaxDnsAnswers = 8;        // addresses put into one reply

enum class DnsRcode : std::uint8_t { kNoError = 0, kFormErr = 1, kServFail = 2, kNxDomain = 3, kRefused = 5 };

struct DnsQuery {
  std::uint16_t id = 0;
  bool recursion_desired = false;
  std::uint8_t opcode = 0;
  std::string name;          // lower case, dot-separated, no trailing dot ("" for the root)
  std::uint16_t qtype = 0;   // 1 = A, 28 = AAAA, …
  std::uint16_t qclass = 0;
  std::string question;      // the question's bytes as sent, echoed into the reply
};

// The query, or nullopt when `packet` is not one (a reply, several questions, a bad name).
std::optional<DnsQuery> parse_dns_query(std::string_view packet);
// When a packet is too broken for parse_dns_query but has a header: its id, for a FORMERR reply.
std::optional<std::uint16_t> dns_packet_id(std::string_view packet);
// The reply to `q` with `rcode` and, for an A query, `ipv4` addresses ("10.0.0.1") as answers.
std::string dns_reply(const DnsQuery& q, DnsRcode rcode, const std::vector<std::string>& ipv4 = {},
                      std::uint32_t ttl = 60);
// A header-only FORMERR reply for an unparseable query with this id.
std::string dns_formerr(std::uint16_t id);
// "A", "AAAA", "TXT", … or the number.
std::string dns_type_name(std::uint16_t qtype);

}  // namespace forge::services
