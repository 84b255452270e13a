// Unit tests for policy/allowlist and policy/squid_conf: normalisation rules and config content.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "policy/allowlist.h"
#include "policy/squid_conf.h"
#include "stack/local_images.h"

using forge::Errc;
using forge::policy::check_squid_options;
using forge::policy::normalise_allowlist;
using forge::policy::squid_conf;
using forge::policy::SquidOptions;
using Strings = std::vector<std::string>;

namespace {

Strings normalised(const Strings& in) {
  auto r = normalise_allowlist(in);
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  return *r;
}

// The error for `entry`, which must be rejected.
std::string rejection(const std::string& entry) {
  auto r = normalise_allowlist({"fine.example.com", entry});
  REQUIRE_MESSAGE(!r.has_value(), "accepted: '" << entry << "'");
  CHECK(r.error().code == Errc::kInvalid);
  return r.error().message;
}

Strings lines_of(const std::string& text) {
  Strings out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The http_access rules in order: squid applies the first that matches.
Strings access_rules(const std::string& conf) {
  Strings out;
  for (auto& l : lines_of(conf))
    if (l.rfind("http_access ", 0) == 0) out.push_back(l.substr(12));
  return out;
}

std::ptrdiff_t position(const Strings& v, const std::string& s) {
  auto it = std::find(v.begin(), v.end(), s);
  REQUIRE_MESSAGE(it != v.end(), "missing rule: " << s);
  return it - v.begin();
}

bool has_line(const std::string& conf, const std::string& line) {
  auto ls = lines_of(conf);
  return std::find(ls.begin(), ls.end(), line) != ls.end();
}

SquidOptions options() {
  SquidOptions o;
  o.internal_subnet = "192.168.112.0/20";
  o.allowlist = normalised({"allowed.example.test", "*.allowsub.example.test"});
  return o;
}

}  // namespace

TEST_CASE("squid allowlist: case, scheme, port, path and trailing dot are stripped") {
  CHECK(normalised({"Example.COM"}) == Strings{"example.com"});
  CHECK(normalised({"https://Example.com:443/path?q=1#f"}) == Strings{"example.com"});
  CHECK(normalised({"http://api.example.com/v1/"}) == Strings{"api.example.com"});
  CHECK(normalised({"example.com:8443"}) == Strings{"example.com"});
  CHECK(normalised({"example.com."}) == Strings{"example.com"});
  CHECK(normalised({"  pypi.org  "}) == Strings{"pypi.org"});
  CHECK(normalised({}).empty());
}

TEST_CASE("squid allowlist: *.x becomes .x, which squid reads as the domain and its subdomains") {
  CHECK(normalised({"*.example.com"}) == Strings{".example.com"});
  CHECK(normalised({".example.com"}) == Strings{".example.com"});
  CHECK(normalised({"https://*.Example.com:443/"}) == Strings{".example.com"});
}

TEST_CASE("squid allowlist: overlaps that make squid FATAL are collapsed to the wider entry") {
  // `www.example.com .example.com` and `example.org .example.org` FATAL in squid 5.7.
  CHECK(normalised({"www.example.com", ".example.com"}) == Strings{".example.com"});
  CHECK(normalised({".example.com", "www.example.com"}) == Strings{".example.com"});
  CHECK(normalised({"example.org", ".example.org"}) == Strings{".example.org"});
  CHECK(normalised({"example.org", "*.example.org", "a.b.example.org"}) == Strings{".example.org"});
  CHECK(normalised({".a.example.com", ".example.com"}) == Strings{".example.com"});
  // A label match, not a substring one: notallowsub is not under .allowsub.
  CHECK(normalised({"notallowsub.example.test", ".allowsub.example.test"}) ==
        Strings{".allowsub.example.test", "notallowsub.example.test"});
  // A subdomain wildcard does not cover its parent's exact name.
  CHECK(normalised({"example.com", ".api.example.com"}) == Strings{".api.example.com", "example.com"});
}

TEST_CASE("squid allowlist: sorted and deduplicated") {
  CHECK(normalised({"b.example", "a.example", "B.example.", "https://a.example/"}) ==
        Strings{"a.example", "b.example"});
}

TEST_CASE("squid allowlist: IP literals are rejected, naming the entry") {
  for (const char* ip :
       {"192.168.96.2", "192.168.96.2:443", "https://10.0.0.1/", "127.1", "0x7f000001", "10.0.0.1.", "[::1]",
        "[2001:db8::1]:443", "::1", "2001:db8::1", "https://[2001:db8::1]:443/", "1.2.3.4.5"}) {
    CAPTURE(ip);
    std::string msg = rejection(ip);
    CHECK(msg.find(std::string("'") + ip + "'") != std::string::npos);
    CHECK(msg.find("IP address") != std::string::npos);
  }
}

TEST_CASE("squid allowlist: names breaking the label rules are rejected") {
  std::string long_label(64, 'a');
  std::string long_name;
  for (int i = 0; i < 5; ++i) long_name += std::string(60, 'b') + ".";
  long_name += "com";
  for (const std::string& bad :
       {std::string(""), std::string("   "), std::string("*"), std::string("*."), std::string("."),
        std::string("exa_mple.com"), std::string("-bad.com"), std::string("bad-.com"), std::string("a..b.com"),
        std::string("ex ample.com"), std::string("user@example.com"), std::string("*.*.example.com"),
        std::string("bücher.de"), long_label + ".com", long_name, std::string("example.com:99999"),
        std::string("example.com:abc"), std::string("example.com:"), std::string("https://")}) {
    CAPTURE(bad);
    rejection(bad);
  }
  CHECK(rejection("bücher.de").find("punycode") != std::string::npos);
  CHECK(normalised({"xn--bcher-kva.de"}) == Strings{"xn--bcher-kva.de"});
}

TEST_CASE("squid allowlist: an entry cannot smuggle squid directives into the config") {
  std::string msg = rejection("a.example.com\nhttp_access allow all");
  CHECK(msg.find("\\x0a") != std::string::npos);  // the newline is shown, not printed
  rejection("a.example.com http_access");
  CHECK(normalised({"a.example.com#x allow all"}) == Strings{"a.example.com"});  // '#' starts a URL fragment
}

TEST_CASE("squid.conf: default is CONNECT-only to allowlisted hosts, from task clients, deny by default") {
  std::string conf = squid_conf(options());
  CHECK(has_line(conf, "http_port 3128"));
  CHECK(has_line(conf, "visible_hostname egress-proxy"));
  CHECK(has_line(conf, "max_filedescriptors 4096"));
  CHECK(has_line(conf, "acl task_clients src 192.168.112.0/20"));
  CHECK(has_line(conf, "acl allowlist dstdomain -n .allowsub.example.test allowed.example.test"));
  CHECK(has_line(conf, "acl SSL_ports port 443"));

  Strings rules = access_rules(conf);
  REQUIRE(rules.size() == 9);
  CHECK(rules.front() == "deny !task_clients");
  CHECK(rules[1] == "deny !allowlist");  // before anything that would resolve the name
  CHECK(position(rules, "deny !CONNECT") < position(rules, "allow CONNECT"));
  CHECK(position(rules, "deny !SSL_ports") < position(rules, "allow CONNECT"));
  CHECK(position(rules, "deny to_localhost") < position(rules, "allow CONNECT"));
  CHECK(position(rules, "deny to_linklocal_egr") < position(rules, "allow CONNECT"));
  CHECK(position(rules, "deny to_private_egr") < position(rules, "allow CONNECT"));
  CHECK(rules.back() == "deny all");
  CHECK(std::count_if(rules.begin(), rules.end(), [](auto& r) { return r.rfind("allow", 0) == 0; }) == 1);

  // No redefinition of squid's built-in ACLs, nothing written to disk, logs on stdio.
  CHECK(conf.find("acl CONNECT") == std::string::npos);
  CHECK(conf.find("acl to_localhost") == std::string::npos);
  CHECK(conf.find("cache_dir") == std::string::npos);
  CHECK(conf.find("forwarded_for") == std::string::npos);
  for (const char* l : {"cache deny all", "cache_mem 0 MB", "pinger_enable off", "pid_filename none",
                        "logfile_rotate 0", "shutdown_lifetime 1 seconds", "access_log stdio:/dev/stdout egress",
                        "cache_log /dev/stderr", "logformat egress %ts.%03tu %>a %rm %ru %>Hs %Ss/%Sh %<a %>st %<st"}) {
    CAPTURE(l);
    CHECK(has_line(conf, l));
  }
}

TEST_CASE("squid.conf: private destinations are denied unless allowed (local tests)") {
  SquidOptions o = options();
  CHECK(has_line(squid_conf(o), "http_access deny to_private_egr"));
  o.deny_private = false;
  std::string conf = squid_conf(o);
  Strings rules = access_rules(conf);
  CHECK(std::find(rules.begin(), rules.end(), "deny to_private_egr") == rules.end());
  CHECK(position(rules, "deny to_localhost") < position(rules, "allow CONNECT"));  // still refused
  CHECK(position(rules, "deny to_linklocal_egr") < position(rules, "allow CONNECT"));
}

TEST_CASE("squid.conf: only the upstream network is exempt from the private-destination rule") {
  SquidOptions o = options();
  o.upstream_subnet = "10.231.0.24/29";
  o.upstream_gateway = "10.231.0.25";
  REQUIRE(check_squid_options(o).has_value());
  std::string conf = squid_conf(o);
  CHECK(has_line(conf, "acl to_upstream_egr dst 10.231.0.24/29"));
  Strings rules = access_rules(conf);
  // The host's side of the upstream bridge stays closed, before the exemption.
  CHECK(has_line(conf, "acl to_upstream_gw_egr dst 10.231.0.25/32"));
  CHECK(position(rules, "deny to_upstream_gw_egr") < position(rules, "deny to_private_egr !to_upstream_egr"));
  CHECK(std::find(rules.begin(), rules.end(), "deny to_private_egr") == rules.end());
  CHECK(position(rules, "deny to_private_egr !to_upstream_egr") < position(rules, "allow CONNECT"));
  CHECK(rules[1] == "deny !allowlist");  // an upstream's name must still be allowlisted
  o.upstream_subnet = "10.231.0.24/29\nhttp_access allow all";
  CHECK_FALSE(check_squid_options(o).has_value());
}

TEST_CASE("squid.conf: the plain-HTTP variant allows GET/HEAD on port 80 and strips X-Forwarded-For") {
  SquidOptions o = options();
  o.allow_plain_http = true;
  std::string conf = squid_conf(o);
  CHECK(has_line(conf, "acl HTTP_ports port 80"));
  CHECK(has_line(conf, "acl plain_methods method GET HEAD"));
  CHECK(has_line(conf, "forwarded_for delete"));
  Strings rules = access_rules(conf);
  CHECK(rules[1] == "deny !allowlist");
  CHECK(std::find(rules.begin(), rules.end(), "deny !CONNECT") == rules.end());
  CHECK(position(rules, "deny CONNECT !SSL_ports") < position(rules, "allow CONNECT"));
  CHECK(position(rules, "deny !CONNECT !HTTP_ports") < position(rules, "allow plain_methods"));
  CHECK(position(rules, "deny to_private_egr") < position(rules, "allow plain_methods"));
  CHECK(position(rules, "allow plain_methods") < position(rules, "deny all"));
  CHECK(rules.back() == "deny all");
}

TEST_CASE("squid.conf: CONNECT ports are listed once each") {
  SquidOptions o = options();
  o.connect_ports = {8443, 443, 8443};
  CHECK(has_line(squid_conf(o), "acl SSL_ports port 443 8443"));
}

TEST_CASE("squid.conf: a large allowlist is split over lines squid can read (it misparses lines over 8 KiB)") {
  Strings names;
  for (int i = 0; i < 300; ++i)
    names.push_back("host" + std::to_string(i) + "." + std::string(40, 'x') + ".example.com");
  SquidOptions o = options();
  o.allowlist = normalised(names);
  std::size_t seen = 0, acl_lines = 0;
  for (const auto& l : lines_of(squid_conf(o))) {
    CHECK(l.size() < 8000);
    if (l.rfind("acl allowlist dstdomain -n ", 0) != 0) continue;
    ++acl_lines;
    seen += static_cast<std::size_t>(std::count(l.begin(), l.end(), ' ')) - 3;
  }
  CHECK(acl_lines > 1);
  CHECK(seen == 300);
}

TEST_CASE("squid.conf: an empty allowlist denies everything without an empty ACL") {
  SquidOptions o = options();
  o.allowlist.clear();
  std::string conf = squid_conf(o);
  CHECK(conf.find("acl allowlist") == std::string::npos);
  Strings rules = access_rules(conf);
  CHECK(rules[0] == "deny !task_clients");
  CHECK(rules[1] == "deny all");
}

TEST_CASE("squid options are checked before a config is written") {
  CHECK(check_squid_options(options()).has_value());
  SquidOptions v6 = options();
  v6.internal_subnet = "fd00:1::/64";
  CHECK(check_squid_options(v6).has_value());

  for (const char* subnet : {"", "192.168.112.0", "192.168.112.0/33", "example.com/8", "10.0.0.0/8 all"}) {
    CAPTURE(subnet);
    SquidOptions o = options();
    o.internal_subnet = subnet;
    auto st = check_squid_options(o);
    REQUIRE_FALSE(st.has_value());
    CHECK(st.error().code == Errc::kInvalid);
  }
  for (Strings bad : {Strings{"www.example.com", ".example.com"}, Strings{"Example.com"}, Strings{"b.com", "a.com"},
                      Strings{"a.com\nhttp_access allow all"}}) {
    SquidOptions o = options();
    o.allowlist = bad;
    CHECK_FALSE(check_squid_options(o).has_value());
  }
  for (std::vector<int> ports : {std::vector<int>{}, std::vector<int>{0}, std::vector<int>{443, 65536}}) {
    SquidOptions o = options();
    o.connect_ports = ports;
    CHECK_FALSE(check_squid_options(o).has_value());
  }
}

TEST_CASE("squid image: a host without squid gets told to install it") {
  forge::stack::SquidSources src;
  src.squid = "/nonexistent/usr/sbin/squid";
  auto ctx = forge::stack::squid_build_context(src);
  REQUIRE_FALSE(ctx.has_value());
  CHECK(ctx.error().code == Errc::kNotFound);
  CHECK(ctx.error().what().find("install squid") != std::string::npos);
  CHECK(ctx.error().what().find("scripts/install-deps.sh") != std::string::npos);
}
