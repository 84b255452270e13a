// The trial's resolver: one UDP socket, one thread, a decision per query.
#include "services/dns_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "core/egress_entry.h"
#include "core/json.h"

namespace forge::services {

namespace {

constexpr int kPollMillis = 50;  // how soon stop() and a switch of policy.mode are noticed

bool in_net(std::uint32_t addr, std::uint32_t net, int prefix) {
  const std::uint32_t mask = prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix);
  return (addr & mask) == (net & mask);
}

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string peer_address(const void* from) {
  const auto* sin = static_cast<const sockaddr_in*>(from);
  std::array<char, INET_ADDRSTRLEN> buf{};
  return inet_ntop(AF_INET, &sin->sin_addr, buf.data(), buf.size()) ? buf.data() : "";
}

}  // namespace

bool dns_answer_allowed(const std::string& ipv4, bool allow_private) {
  in_addr a{};
  if (inet_pton(AF_INET, ipv4.c_str(), &a) != 1) return false;
  const std::uint32_t h = ntohl(a.s_addr);
  struct Net { std::uint32_t net; int prefix; };
  static constexpr std::array<Net, 5> kNever{{{0x00000000, 8}, {0x7f000000, 8}, {0xa9fe0000, 16}, {0xe0000000, 4},
                                              {0xf0000000, 4}}};
  static constexpr std::array<Net, 4> kPrivate{{{0x0a000000, 8}, {0xac100000, 12}, {0xc0a80000, 16}, {0x64400000, 10}}};
  for (const auto& n : kNever)
    if (in_net(h, n.net, n.prefix)) return false;
  if (!allow_private)
    for (const auto& n : kPrivate)
      if (in_net(h, n.net, n.prefix)) return false;
  return true;
}

std::string dns_mode_word(int mode) {
  if (mode == static_cast<int>(DnsMode::kOpen)) return "open";
  if (mode == static_cast<int>(DnsMode::kNone)) return "none";
  if (mode == static_cast<int>(DnsMode::kAllowlist)) return "allowlist";
  return "allowlist-" + std::to_string(mode - 2);
}

namespace {

int current_mode(const DnsPolicy& p) { return p.mode ? p.mode->load() : static_cast<int>(DnsMode::kAllowlist); }

// The names the mode answers; null: every name (open) or none.
const std::vector<std::string>* mode_names(const DnsPolicy& p, int mode) {
  if (mode == static_cast<int>(DnsMode::kAllowlist)) return &p.names;
  if (mode > static_cast<int>(DnsMode::kNone) && static_cast<std::size_t>(mode - 3) < p.more_names.size())
    return &p.more_names[static_cast<std::size_t>(mode - 3)];
  return nullptr;
}

}  // namespace

DnsDecision decide_dns(const DnsQuery& q, const DnsPolicy& policy, const DnsLookup& lookup) {
  DnsDecision d;
  d.outcome = "refused";
  const int mode = current_mode(policy);
  const bool open = mode == static_cast<int>(DnsMode::kOpen);
  const auto* names = mode_names(policy, mode);
  const bool listed = open || (names && std::find(names->begin(), names->end(), q.name) != names->end());
  if (!listed || q.opcode != 0 || q.qclass != 1) return d;
  d.outcome = "answered";
  d.rcode = DnsRcode::kNoError;
  if (q.qtype != 1) return d;  // no IPv6 egress: AAAA and the rest get an empty answer
  for (const auto& a : lookup ? lookup(q.name) : std::vector<std::string>{})
    if (dns_answer_allowed(a, policy.allow_private || open) && d.answers.size() < kMaxDnsAnswers) d.answers.push_back(a);
  if (d.answers.empty()) d.rcode = DnsRcode::kServFail, d.outcome = "refused";  // nothing it may hand out
  return d;
}

std::vector<std::string> system_lookup(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::vector<std::string> out;
  if (getaddrinfo(name.c_str(), nullptr, &hints, &res) != 0) return out;
  for (auto* p = res; p; p = p->ai_next) {
    std::string a = peer_address(p->ai_addr);
    if (!a.empty() && std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  }
  freeaddrinfo(res);
  return out;
}

Result<std::unique_ptr<DnsServer>> DnsServer::start(DnsServerOptions opts) {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(Errc::kIo, std::string("creating the resolver's socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(opts.port);
  if (inet_pton(AF_INET, opts.host.c_str(), &addr.sin_addr) != 1) {
    ::close(fd);
    return fail(Errc::kInvalid, "the resolver's address '" + opts.host + "' is not IPv4");
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int e = errno;
    ::close(fd);
    return fail(Errc::kUnavailable, "binding " + opts.host + ":" + std::to_string(opts.port) + "/udp: " + std::strerror(e));
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  std::unique_ptr<DnsServer> s(new DnsServer(std::move(opts), fd, ntohs(addr.sin_port)));
  s->thread_ = std::thread([p = s.get()] { p->serve(); });
  return s;
}

DnsServer::DnsServer(DnsServerOptions opts, int fd, std::uint16_t port) : opts_(std::move(opts)), fd_(fd), port_(port) {}

DnsServer::~DnsServer() { stop(); }

void DnsServer::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) ::close(fd_), fd_ = -1;
}

void DnsServer::serve() {
  std::array<char, kMaxDnsQueryBytes + 1> buf{};
  std::optional<int> told;  // the mode last told through on_mode
  while (!stopping_) {
    if (const int now = current_mode(opts_.policy); now != told && opts_.on_mode) {
      told = now;
      opts_.on_mode(now);
    }
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, kPollMillis) <= 0) continue;
    sockaddr_in from{};
    socklen_t from_len = sizeof from;
    ssize_t n = ::recvfrom(fd_, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n <= 0) continue;
    answer(std::string_view(buf.data(), static_cast<std::size_t>(n)), &from, from_len);
  }
  report_dropped(true);
}

void DnsServer::answer(std::string_view packet, const void* from, unsigned from_len) {
  auto q = parse_dns_query(packet);
  std::string reply;
  EgressEntry e;
  e.kind = EgressKind::kDns;
  e.t_ms = now_ms();
  e.from = peer_address(from);
  if (!q) {
    auto id = dns_packet_id(packet);
    if (!id) return;  // not a query at all: no reply, as a resolver drops a stray reply
    reply = dns_formerr(*id);
    e.host = "(malformed query)", e.what = "?", e.outcome = "refused";
  } else {
    DnsDecision d = decide_dns(*q, opts_.policy, opts_.lookup);
    reply = dns_reply(*q, d.rcode, d.answers);
    e.host = q->name.empty() ? "." : q->name, e.what = dns_type_name(q->qtype), e.outcome = d.outcome;
    e.answers = d.answers;
  }
  ::sendto(fd_, reply.data(), reply.size(), 0, static_cast<const sockaddr*>(from), from_len);
  log(egress_line(e));
}

// One line per query up to kMaxDnsLogLines; past it, the running count of dropped lines.
void DnsServer::log(std::string_view line) {
  if (!opts_.log_line) return;
  if (logged_ < kMaxDnsLogLines) {
    ++logged_;
    opts_.log_line(line);
    return;
  }
  ++dropped_;
  report_dropped(false);
}

// {"kind":"dropped","total":N}, N counting from the start: at most once a second, and at stop.
void DnsServer::report_dropped(bool final) {
  if (!opts_.log_line || dropped_ == dropped_reported_) return;
  const std::int64_t now = now_ms();
  if (!final && now - last_report_ms_ < 1000) return;
  last_report_ms_ = now;
  dropped_reported_ = dropped_;
  json::Writer w;
  w.begin_object().field("kind", "dropped").field("total", static_cast<std::int64_t>(dropped_)).end_object();
  opts_.log_line(w.take());
}

}  // namespace forge::services
