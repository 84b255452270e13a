// The trial's resolver: DNS wire format, the decision per query, and a real UDP round trip.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "core/egress_entry.h"
#include "services/dns_server.h"
#include "services/dns_wire.h"

using namespace forge;
using namespace forge::services;

namespace {

// A query for `name` of type `qtype` with id 0x1234 and RD set.
std::string query(const std::string& name, std::uint16_t qtype = 1) {
  std::string p{"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", 12};
  std::size_t start = 0;
  while (start <= name.size() && !name.empty()) {
    std::size_t dot = name.find('.', start);
    std::string label = name.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    p += static_cast<char>(label.size());
    p += label;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  p += '\0';
  p += static_cast<char>(qtype >> 8);
  p += static_cast<char>(qtype & 0xff);
  p += std::string("\x00\x01", 2);
  return p;
}

int rcode(const std::string& reply) { return static_cast<unsigned char>(reply[3]) & 0xf; }
int answer_count(const std::string& reply) {
  return (static_cast<unsigned char>(reply[6]) << 8) | static_cast<unsigned char>(reply[7]);
}

}  // namespace

TEST_CASE("dns: a query's name and type are read, lower-cased, and odd bytes shown escaped") {
  auto q = parse_dns_query(query("Evil.Example.COM", 16));
  REQUIRE(q);
  CHECK(q->id == 0x1234);
  CHECK(q->recursion_desired);
  CHECK(q->name == "evil.example.com");
  CHECK(dns_type_name(q->qtype) == "TXT");
  auto odd = parse_dns_query(query(std::string("a\x01") + "b.x"));
  REQUIRE(odd);
  CHECK(odd->name == "a\\001b.x");
}

TEST_CASE("dns: malformed packets are not queries") {
  CHECK_FALSE(parse_dns_query("short"));
  std::string reply = query("a.b");
  reply[2] = static_cast<char>(0x81);  // QR set: a reply
  CHECK_FALSE(parse_dns_query(reply));
  std::string two = query("a.b");
  two[5] = 2;  // two questions
  CHECK_FALSE(parse_dns_query(two));
  CHECK(dns_packet_id(two) == 0x1234);
  std::string pointer = query("a.b");
  pointer[12] = static_cast<char>(0xc0);  // compression in the question
  CHECK_FALSE(parse_dns_query(pointer));
  CHECK_FALSE(parse_dns_query(query(std::string(64, 'a') + ".com")));  // a label past 63 bytes
  std::string long_name;
  for (int i = 0; i < 5; ++i) long_name += std::string(60, 'a') + ".";
  CHECK_FALSE(parse_dns_query(query(long_name + "com")));  // past 255 bytes on the wire
  CHECK_FALSE(parse_dns_query(std::string(600, '\0')));
}

TEST_CASE("dns: refused unless listed; listed names answer A with allowed addresses only") {
  DnsPolicy none;
  DnsLookup lookup = [](const std::string&) { return std::vector<std::string>{"93.184.216.34", "127.0.0.1", "10.1.2.3"}; };
  auto q = *parse_dns_query(query("example.com"));
  auto d = decide_dns(q, none, lookup);
  CHECK(d.rcode == DnsRcode::kRefused);
  CHECK(d.outcome == "refused");

  DnsPolicy some;
  some.names = {"example.com"};
  d = decide_dns(q, some, lookup);
  CHECK(d.rcode == DnsRcode::kNoError);
  CHECK(d.answers == std::vector<std::string>{"93.184.216.34"});  // never loopback; private not allowed
  some.allow_private = true;
  CHECK(decide_dns(q, some, lookup).answers == std::vector<std::string>{"93.184.216.34", "10.1.2.3"});

  // A wildcard entry's subdomains are not listed: an agent's chosen label never leaves.
  CHECK(decide_dns(*parse_dns_query(query("secret-data.example.com")), some, lookup).rcode == DnsRcode::kRefused);
  auto aaaa = decide_dns(*parse_dns_query(query("example.com", 28)), some, lookup);
  CHECK(aaaa.rcode == DnsRcode::kNoError);
  CHECK(aaaa.answers.empty());
  DnsLookup loopback = [](const std::string&) { return std::vector<std::string>{"127.0.0.1", "169.254.169.254"}; };
  CHECK(decide_dns(q, some, loopback).outcome == "refused");  // nothing it may hand out
}

TEST_CASE("dns: the server answers over UDP and logs one ledger line per query") {
  std::mutex mu;
  std::vector<std::string> lines;
  DnsServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.policy.names = {"allowed.test"};
  o.policy.allow_private = true;
  o.lookup = [](const std::string&) { return std::vector<std::string>{"192.168.7.7"}; };
  o.log_line = [&](std::string_view l) {
    std::lock_guard lock(mu);
    lines.emplace_back(l);
  };
  auto server = DnsServer::start(o);
  REQUIRE(server);
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons((*server)->port());
  inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  auto ask = [&](const std::string& packet) {
    ::sendto(fd, packet.data(), packet.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
    pollfd p{fd, POLLIN, 0};
    REQUIRE(::poll(&p, 1, 2000) == 1);
    char buf[600];
    auto n = ::recv(fd, buf, sizeof buf, 0);
    return std::string(buf, static_cast<std::size_t>(n));
  };
  std::string refused = ask(query("exfil-abc123.evil.test"));
  CHECK(rcode(refused) == 5);
  std::string answered = ask(query("allowed.test"));
  CHECK(rcode(answered) == 0);
  CHECK(answer_count(answered) == 1);
  CHECK(answered.substr(answered.size() - 4) == std::string("\xc0\xa8\x07\x07", 4));
  std::string bad = query("a.b");
  bad[5] = 3;
  CHECK(rcode(ask(bad)) == 1);
  ::close(fd);
  (*server)->stop();
  std::lock_guard lock(mu);
  REQUIRE(lines.size() == 3);
  auto ledger = parse_egress_jsonl(lines[0] + "\n" + lines[1] + "\n");
  REQUIRE(ledger.entries.size() == 2);
  CHECK(ledger.entries[0].host == "exfil-abc123.evil.test");
  CHECK(ledger.entries[0].outcome == "refused");
  CHECK(ledger.entries[0].from == "127.0.0.1");
  CHECK(ledger.entries[1].answers == std::vector<std::string>{"192.168.7.7"});
}

TEST_CASE("dns: while open (a full_internet phase) every name is answered; closed again, refused") {
  std::atomic<int> mode{static_cast<int>(DnsMode::kOpen)};
  DnsPolicy p;
  p.mode = &mode;
  DnsLookup lookup = [](const std::string&) { return std::vector<std::string>{"10.9.8.7", "127.0.0.1"}; };
  auto q = *parse_dns_query(query("files.pythonhosted.example"));
  auto d = decide_dns(q, p, lookup);
  CHECK(d.outcome == "answered");
  CHECK(d.answers == std::vector<std::string>{"10.9.8.7"});  // never loopback, even open
  mode = static_cast<int>(DnsMode::kAllowlist);
  CHECK(decide_dns(q, p, lookup).rcode == DnsRcode::kRefused);
}

TEST_CASE("dns: mode none (a no_internet phase beside a limited_internet one) refuses even the allowlist's names") {
  std::atomic<int> mode{static_cast<int>(DnsMode::kAllowlist)};
  DnsPolicy p;
  p.names = {"pypi.example"};
  p.allow_private = true;  // the lookup's address is a private one
  p.mode = &mode;
  DnsLookup lookup = [](const std::string&) { return std::vector<std::string>{"10.9.8.7"}; };
  auto listed = *parse_dns_query(query("pypi.example"));
  CHECK(decide_dns(listed, p, lookup).outcome == "answered");
  mode = static_cast<int>(DnsMode::kNone);
  auto d = decide_dns(listed, p, lookup);
  CHECK(d.outcome == "refused");
  CHECK(d.rcode == DnsRcode::kRefused);
  CHECK(d.answers.empty());
  mode = static_cast<int>(DnsMode::kAllowlist);
  CHECK(decide_dns(listed, p, lookup).outcome == "answered");
  CHECK(dns_mode_word(static_cast<int>(DnsMode::kNone)) == "none");
  // A second allowlist (a Harbor step's own): its names only while it is the mode.
  p.more_names = {{"files.example"}};
  auto other = *parse_dns_query(query("files.example"));
  CHECK(decide_dns(other, p, lookup).outcome == "refused");
  mode = allowlist_mode(1);
  CHECK(dns_mode_word(mode) == "allowlist-1");
  CHECK(decide_dns(other, p, lookup).outcome == "answered");
  CHECK(decide_dns(listed, p, lookup).outcome == "refused");
  mode = allowlist_mode(2);  // no such allowlist: nothing
  CHECK(decide_dns(other, p, lookup).outcome == "refused");
}
