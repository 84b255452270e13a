// Allowlist normalisation: the rules of reference/egress.md §1, checked against squid 5.7's parser.
#include "policy/allowlist.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <set>

#include "core/strings.h"

namespace forge::policy {

namespace {

constexpr std::size_t kMaxHostLength = 253;
constexpr std::size_t kMaxLabelLength = 63;

bool is_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// inet_aton, not inet_pton: resolvers also read "127.1" or "0x7f000001" as addresses.
bool is_ip_literal(const std::string& host) {
  in_addr v4{};
  in6_addr v6{};
  return ::inet_aton(host.c_str(), &v4) != 0 || ::inet_pton(AF_INET6, host.c_str(), &v6) == 1;
}

// Why `host` (no leading dot) is not a usable host name, or empty when it is.
std::string host_problem(const std::string& host) {
  if (host.empty()) return "has no host name";
  if (is_ip_literal(host)) return "is an IP address: list host names (the proxy matches names, not addresses)";
  if (host.size() > kMaxHostLength) return "is longer than 253 characters";
  std::size_t start = 0;
  for (;;) {
    std::size_t dot = host.find('.', start);
    std::string_view label =
        std::string_view(host).substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (label.empty()) return "has an empty label";
    if (label.size() > kMaxLabelLength) return "has a label longer than 63 characters";
    for (char c : label) {
      bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
      if (!ok)
        return static_cast<unsigned char>(c) >= 0x80
                   ? "is not an ASCII host name: write international names in punycode (xn--…)"
                   : "is not a host name: only letters, digits, '-' and '.' are allowed";
    }
    if (label.front() == '-' || label.back() == '-') return "has a label starting or ending with '-'";
    if (dot == std::string::npos) {
      // A numeric top-level label is never a name; resolvers may read it as an address.
      if (is_digits(label)) return "looks like an IP address: list host names";
      return {};
    }
    start = dot + 1;
  }
}

// The entry as shown in messages: control characters escaped so a stray newline stays visible.
std::string shown(std::string_view raw) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

Unexpected invalid(std::string_view raw, std::string_view why) {
  return fail(Errc::kInvalid, "allowlist entry '" + shown(raw) + "' " + std::string(why));
}

// One entry in squid's form ("host" or ".domain"), or an error naming it.
Result<std::string> normalise_entry(const std::string& raw) {
  std::string s = to_lower(trim(raw));
  if (s.empty()) return invalid(raw, "is empty");
  if (auto scheme = s.find("://"); scheme != std::string::npos) s.erase(0, scheme + 3);
  if (auto path = s.find_first_of("/?#"); path != std::string::npos) s.erase(path);
  if (!s.empty() && s.front() == '[')
    return invalid(raw, "is an IP address: list host names (the proxy matches names, not addresses)");
  if (auto colon = s.find(':'); colon != std::string::npos) {
    std::string host = s.substr(0, colon);
    std::string port = s.substr(colon + 1);
    if (port.find(':') != std::string::npos) {  // more than one colon: IPv6, or nonsense
      in6_addr v6{};
      if (::inet_pton(AF_INET6, s.c_str(), &v6) == 1)
        return invalid(raw, "is an IP address: list host names (the proxy matches names, not addresses)");
      return invalid(raw, "is not a host name");
    }
    if (!is_digits(port) || port.size() > 5 || std::stoi(port) > 65535) return invalid(raw, "has an invalid port");
    s = host;
  }
  if (!s.empty() && s.back() == '.') s.pop_back();
  if (starts_with(s, "*.")) s.erase(0, 1);  // "*.x" → ".x": squid would take "*" literally
  bool wildcard = !s.empty() && s.front() == '.';
  std::string host = wildcard ? s.substr(1) : s;
  if (std::string why = host_problem(host); !why.empty()) return invalid(raw, why);
  return s;
}

// True when `host` or (with `strict`) only a proper parent of it is in `domains`.
bool covered(const std::string& host, const std::set<std::string>& domains, bool strict) {
  if (!strict && domains.count(host)) return true;
  for (auto dot = host.find('.'); dot != std::string::npos; dot = host.find('.', dot + 1))
    if (domains.count(host.substr(dot + 1))) return true;
  return false;
}

}  // namespace

Result<std::vector<std::string>> normalise_allowlist(const std::vector<std::string>& entries) {
  std::set<std::string> domains, hosts;  // ".x" entries (stored without the dot) and exact names
  for (const auto& raw : entries) {
    auto e = normalise_entry(raw);
    if (!e) return e.fail();
    if (e->front() == '.')
      domains.insert(e->substr(1));
    else
      hosts.insert(*e);
  }
  // squid's dstdomain tree FATALs when one entry covers another, so keep only the widest.
  std::vector<std::string> out;
  for (const auto& d : domains)
    if (!covered(d, domains, true)) out.push_back("." + d);
  for (const auto& h : hosts)
    if (!covered(h, domains, false)) out.push_back(h);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace forge::policy
