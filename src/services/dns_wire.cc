// DNS wire format: parsing one question, building replies.
#include "services/dns_wire.h"

#include <arpa/inet.h>

#include <cctype>
#include <cstdio>

namespace forge::services {

namespace {

constexpr std::size_t kHeaderBytes = 12;
constexpr std::size_t kMaxNameWireBytes = 255;  // RFC 1035
constexpr std::size_t kMaxLabelBytes = 63;

std::uint16_t u16(std::string_view p, std::size_t at) {
  return static_cast<std::uint16_t>((static_cast<unsigned char>(p[at]) << 8) | static_cast<unsigned char>(p[at + 1]));
}

void put16(std::string& out, std::uint16_t v) {
  out += static_cast<char>(v >> 8);
  out += static_cast<char>(v & 0xff);
}

void put32(std::string& out, std::uint32_t v) {
  put16(out, static_cast<std::uint16_t>(v >> 16));
  put16(out, static_cast<std::uint16_t>(v & 0xffff));
}

std::string escaped(unsigned char ch) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\%03u", static_cast<unsigned>(ch));
  return buf;
}

// Reads the question's name at `at` (no compression: a query has nothing to point back to);
// moves `at` past it. Bytes outside printable ASCII are kept as \DDD, so a logged name shows them.
std::optional<std::string> read_name(std::string_view p, std::size_t& at) {
  std::string name;
  std::size_t wire = 1;  // the terminating zero
  for (;;) {
    if (at >= p.size()) return std::nullopt;
    auto len = static_cast<unsigned char>(p[at++]);
    if (len == 0) break;
    wire += len + 1u;
    if (len > kMaxLabelBytes || at + len > p.size() || wire > kMaxNameWireBytes) return std::nullopt;
    if (!name.empty()) name += '.';
    for (std::size_t i = 0; i < len; ++i) {
      auto ch = static_cast<unsigned char>(p[at + i]);
      if (ch > 32 && ch < 127 && ch != '.' && ch != '\\')
        name += static_cast<char>(std::tolower(ch));
      else
        name += escaped(ch);
    }
    at += len;
  }
  return name;
}

}  // namespace

std::optional<DnsQuery> parse_dns_query(std::string_view p) {
  if (p.size() < kHeaderBytes || p.size() > kMaxDnsQueryBytes) return std::nullopt;
  DnsQuery q;
  q.id = u16(p, 0);
  const std::uint16_t flags = u16(p, 2);
  if (flags & 0x8000) return std::nullopt;  // a reply, not a query
  q.opcode = static_cast<std::uint8_t>((flags >> 11) & 0xf);
  q.recursion_desired = (flags & 0x0100) != 0;
  if (u16(p, 4) != 1 || u16(p, 6) != 0 || u16(p, 8) != 0) return std::nullopt;  // one question, nothing else
  std::size_t at = kHeaderBytes;
  auto name = read_name(p, at);
  if (!name || at + 4 > p.size()) return std::nullopt;
  q.name = *name;
  q.qtype = u16(p, at);
  q.qclass = u16(p, at + 2);
  q.question = std::string(p.substr(kHeaderBytes, at + 4 - kHeaderBytes));
  return q;
}

std::optional<std::uint16_t> dns_packet_id(std::string_view p) {
  if (p.size() < kHeaderBytes || (u16(p, 2) & 0x8000)) return std::nullopt;
  return u16(p, 0);
}

std::string dns_reply(const DnsQuery& q, DnsRcode rcode, const std::vector<std::string>& ipv4, std::uint32_t ttl) {
  std::vector<in_addr> addrs;
  for (const auto& a : ipv4) {
    in_addr addr{};
    if (addrs.size() < kMaxDnsAnswers && q.qtype == 1 && inet_pton(AF_INET, a.c_str(), &addr) == 1) addrs.push_back(addr);
  }
  std::string out;
  put16(out, q.id);
  // QR, the query's opcode, RD echoed, RA (the trial's only resolver recurses for what it answers).
  put16(out, static_cast<std::uint16_t>(0x8000 | (q.opcode << 11) | (q.recursion_desired ? 0x0100 : 0) | 0x0080 |
                                        static_cast<std::uint16_t>(rcode)));
  put16(out, 1);
  put16(out, static_cast<std::uint16_t>(addrs.size()));
  put16(out, 0);
  put16(out, 0);
  out += q.question;
  for (const auto& a : addrs) {
    put16(out, 0xc00c);  // the question's name, at offset 12
    put16(out, 1);       // A
    put16(out, 1);       // IN
    put32(out, ttl);
    put16(out, 4);
    out.append(reinterpret_cast<const char*>(&a.s_addr), 4);  // network order already
  }
  return out;
}

std::string dns_formerr(std::uint16_t id) {
  std::string out;
  put16(out, id);
  put16(out, 0x8000 | static_cast<std::uint16_t>(DnsRcode::kFormErr));
  out.append(8, '\0');
  return out;
}

std::string dns_type_name(std::uint16_t t) {
  switch (t) {
    case 1: return "A";
    case 2: return "NS";
    case 5: return "CNAME";
    case 6: return "SOA";
    case 12: return "PTR";
    case 15: return "MX";
    case 16: return "TXT";
    case 28: return "AAAA";
    case 33: return "SRV";
    case 65: return "HTTPS";
    case 255: return "ANY";
    default: return std::to_string(t);
  }
}

}  // namespace forge::services
