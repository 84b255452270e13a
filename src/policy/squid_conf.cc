// Writes the egress sidecar's squid.conf; each line's reason is in reference/egress.md §1.
#include "policy/squid_conf.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>

#include "core/strings.h"
#include "policy/allowlist.h"

namespace forge::policy {

namespace {

// squid reads its config in 8 KiB pieces and misparses a longer line, so the allowlist is split
// over several `acl allowlist` lines (they add up): 16 names of at most 254 bytes stay well below.
constexpr std::size_t kNamesPerLine = 16;

bool is_cidr(const std::string& s) {
  auto slash = s.find('/');
  if (slash == std::string::npos || slash + 1 == s.size() || s.size() - slash > 4) return false;
  std::string addr = s.substr(0, slash), bits = s.substr(slash + 1);
  if (!std::all_of(bits.begin(), bits.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  int prefix = std::stoi(bits);
  in_addr v4{};
  in6_addr v6{};
  if (::inet_pton(AF_INET, addr.c_str(), &v4) == 1) return prefix <= 32;
  if (::inet_pton(AF_INET6, addr.c_str(), &v6) == 1) return prefix <= 128;
  return false;
}

std::string ports_list(std::vector<int> ports) {
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
  std::string out;
  for (int p : ports) out += (out.empty() ? "" : " ") + std::to_string(p);
  return out;
}

}  // namespace

Status check_squid_options(const SquidOptions& opts) {
  if (!is_cidr(opts.internal_subnet))
    return fail(Errc::kInvalid, "proxy client subnet '" + opts.internal_subnet + "' is not a CIDR (a.b.c.d/n)");
  if (!opts.upstream_subnet.empty() && !is_cidr(opts.upstream_subnet))
    return fail(Errc::kInvalid, "upstream subnet '" + opts.upstream_subnet + "' is not a CIDR (a.b.c.d/n)");
  if (!opts.upstream_subnet.empty() && !is_cidr(opts.upstream_gateway + "/32"))
    return fail(Errc::kInvalid, "upstream gateway '" + opts.upstream_gateway + "' is not an IPv4 address");
  if (opts.connect_ports.empty()) return fail(Errc::kInvalid, "no ports given for CONNECT through the proxy");
  for (int p : opts.connect_ports)
    if (p < 1 || p > 65535) return fail(Errc::kInvalid, "proxy CONNECT port " + std::to_string(p) + " is out of range");
  // Anything else could inject squid directives or make squid refuse the overlapping names.
  auto normal = normalise_allowlist(opts.allowlist);
  if (!normal) return normal.fail_with("checking the proxy allowlist");
  if (*normal != opts.allowlist)
    return fail(Errc::kInvalid, "the proxy allowlist is not normalised (pass it through normalise_allowlist)");
  return {};
}

std::string squid_conf(const SquidOptions& opts) {
  const bool plain = opts.allow_plain_http;
  std::string c;
  auto line = [&c](std::string_view l) {
    c += l;
    c += '\n';
  };

  line("# egress allowlist sidecar for network_policy=limited_internet (written by forgectl; squid 5.x / 6.x)");
  line("http_port " + std::to_string(kProxyPort));
  line(std::string("visible_hostname ") + kProxyAlias);
  line("max_filedescriptors 4096");
  line("");

  line("acl task_clients src " + opts.internal_subnet);
  for (std::size_t i = 0; i < opts.allowlist.size(); i += kNamesPerLine) {
    std::size_t end = std::min(opts.allowlist.size(), i + kNamesPerLine);
    std::vector<std::string> chunk(opts.allowlist.begin() + static_cast<std::ptrdiff_t>(i),
                                   opts.allowlist.begin() + static_cast<std::ptrdiff_t>(end));
    line("acl allowlist dstdomain -n " + join(chunk, " "));
  }
  line("acl SSL_ports port " + ports_list(opts.connect_ports));
  if (plain) {
    line("acl HTTP_ports port 80");
    line("acl plain_methods method GET HEAD");
  }
  // to_linklocal is built in only from squid 6; a private name works with 5 and 6.
  line("acl to_linklocal_egr dst 169.254.0.0/16 fe80::/10");
  line("acl to_private_egr dst 10.0.0.0/8 172.16.0.0/12 192.168.0.0/16 100.64.0.0/10 fc00::/7");
  const bool upstreams = !opts.upstream_subnet.empty();
  if (upstreams) {
    line("acl to_upstream_egr dst " + opts.upstream_subnet);
    line("acl to_upstream_gw_egr dst " + opts.upstream_gateway + "/32");
  }
  line("");

  line("http_access deny !task_clients");
  // First, so that a name outside the allowlist is never even resolved. An empty ACL would only
  // draw a warning, so an empty allowlist denies everything outright.
  if (opts.open)
    line("# open: every host, port and method (a full_internet phase)");
  else if (opts.allowlist.empty())
    line("http_access deny all");
  else
    line("http_access deny !allowlist");
  if (plain && !opts.open) {
    line("http_access deny CONNECT !SSL_ports");
    line("http_access deny !CONNECT !HTTP_ports");
  } else if (!opts.open) {
    line("http_access deny !CONNECT");
    line("http_access deny !SSL_ports");
  }
  // Allowlisted names resolving to loopback, metadata or private addresses (DNS rebinding, SSRF).
  line("http_access deny to_localhost");
  line("http_access deny to_linklocal_egr");
  // The host's address on the upstream network (an allowlisted name could be made to resolve there).
  if (upstreams) line("http_access deny to_upstream_gw_egr");
  // The task's upstreams have private addresses on a network of their own; only that one is exempt.
  line(!opts.deny_private ? "# http_access deny to_private_egr  (private destinations allowed)"
       : upstreams        ? "http_access deny to_private_egr !to_upstream_egr"
                          : "http_access deny to_private_egr");
  line(opts.open ? "http_access allow all" : "http_access allow CONNECT");
  if (plain && !opts.open) line("http_access allow plain_methods");
  line("http_access deny all");
  line("");

  line("cache deny all");
  line("cache_mem 0 MB");
  line("pinger_enable off");
  line("pid_filename none");
  line("logfile_rotate 0");
  line("httpd_suppress_version_string on");
  line("shutdown_lifetime 1 seconds");
  if (plain || opts.open) line("forwarded_for delete");  // the origin must not learn the task's internal address
  line("");

  line("logformat egress %ts.%03tu %>a %rm %ru %>Hs %Ss/%Sh %<a %>st %<st");
  line("access_log stdio:/dev/stdout egress");
  // A plain path: squid 5 takes "stdio:/dev/stderr" for a file name here.
  line("cache_log /dev/stderr");
  return c;
}

}  // namespace forge::policy
