// Resolver and proxy logs → the egress ledger.
#include "policy/egress_log.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "core/json.h"
#include "core/strings.h"

namespace forge::policy {

namespace {

std::int64_t to_int(const std::string& s) {
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  return end && *end == '\0' && v >= 0 ? v : 0;
}

// "host:port" (CONNECT) or "http://host[:port]/path" → host, port, path.
void split_url(const std::string& method, const std::string& url, EgressEntry& e) {
  std::string rest = url;
  if (method != "CONNECT") {
    auto scheme = rest.find("://");
    if (scheme != std::string::npos) rest = rest.substr(scheme + 3);
    auto slash = rest.find('/');
    e.path = slash == std::string::npos ? "/" : rest.substr(slash);
    rest = rest.substr(0, slash);
    e.port = 80;
  }
  auto colon = rest.rfind(':');
  if (colon != std::string::npos && rest.find(']', colon) == std::string::npos) {
    std::int64_t p = to_int(rest.substr(colon + 1));
    if (p > 0 && p < 65536) e.port = static_cast<std::uint16_t>(p);
    rest = rest.substr(0, colon);
  }
  e.host = to_lower(rest);
}

// The resolver's line, or its running count of lines it did not log ({"kind":"dropped","total":N}).
void add_resolver_line(std::string_view line, EgressLedger& out, std::size_t& resolver_dropped) {
  auto doc = json::parse(line, "a resolver log line", kMaxEgressLineBytes);
  if (doc && doc->IsObject() && json::get_string(*doc, "kind") == "dropped") {
    resolver_dropped = std::max(resolver_dropped, static_cast<std::size_t>(std::max<std::int64_t>(0, json::get_int(*doc, "total"))));
    return;
  }
  auto parsed = parse_egress_jsonl(line);
  out.dropped += parsed.dropped;
  for (auto& e : parsed.entries) out.entries.push_back(std::move(e));
}

std::string phase_at(std::int64_t t, const std::vector<PhaseMark>& marks) {
  std::string phase;
  for (const auto& m : marks)
    if (m.t_ms <= t) phase = m.phase;
  return phase;
}

}  // namespace

std::optional<EgressEntry> parse_squid_line(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::string t, client, method, url, status, code, server, bytes_out, bytes_in;
  if (!(in >> t >> client >> method >> url >> status >> code >> server >> bytes_out >> bytes_in)) return std::nullopt;
  auto dot = t.find('.');
  std::int64_t secs = to_int(t.substr(0, dot));
  std::int64_t ms = dot == std::string::npos ? 0 : to_int(t.substr(dot + 1, 3));
  if (secs == 0) return std::nullopt;
  EgressEntry e;
  e.kind = EgressKind::kHttp;
  e.t_ms = secs * 1000 + ms;
  e.from = client;
  e.what = method;
  split_url(method, url, e);
  if (e.host.empty()) return std::nullopt;
  e.status = static_cast<int>(to_int(status));
  e.outcome = code.rfind("TCP_DENIED", 0) == 0 || code.rfind("NONE_NONE", 0) == 0 || e.status == 403 ? "denied" : "allowed";
  e.bytes_out = to_int(bytes_out);
  e.bytes_in = to_int(bytes_in);
  return e;
}

EgressLedger egress_ledger(const EgressLogs& logs, const std::vector<PhaseMark>& marks,
                           const std::map<std::string, std::string>& who) {
  EgressLedger all;
  std::size_t resolver_dropped = 0;
  for (auto line : split_lines(logs.resolver)) add_resolver_line(line, all, resolver_dropped);
  // Anything else squid prints there is its own, not a request: skipped, never counted as lost.
  for (auto line : split_lines(logs.proxy))
    if (auto e = parse_squid_line(line)) all.entries.push_back(std::move(*e));
  std::stable_sort(all.entries.begin(), all.entries.end(),
                   [](const EgressEntry& a, const EgressEntry& b) { return a.t_ms < b.t_ms; });
  EgressLedger out;
  out.dropped = all.dropped + resolver_dropped;
  for (auto& e : all.entries) {
    if (out.entries.size() >= kMaxEgressEntries) {
      ++out.dropped;
      continue;
    }
    e.phase = phase_at(e.t_ms, marks);
    if (auto it = who.find(e.from); it != who.end()) e.from = it->second;
    out.entries.push_back(std::move(e));
  }
  return out;
}

}  // namespace forge::policy
