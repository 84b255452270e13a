// The egress ledger: squid's access log and the resolver's lines merged into egress.jsonl.
#include <doctest/doctest.h>

#include "core/egress_entry.h"
#include "policy/egress_log.h"

using namespace forge;
using namespace forge::policy;

TEST_CASE("egress: squid's access log lines become HTTP entries") {
  auto c = parse_squid_line("1733500000.250 10.231.0.2 CONNECT Allowed.Example:443 200 TCP_TUNNEL/HIER_DIRECT 93.184.216.34 517 4096");
  REQUIRE(c);
  CHECK(c->kind == EgressKind::kHttp);
  CHECK(c->t_ms == 1733500000250);
  CHECK(c->host == "allowed.example");
  CHECK(c->port == 443);
  CHECK(c->path.empty());
  CHECK(c->outcome == "allowed");
  CHECK(c->bytes_out == 517);
  CHECK(c->bytes_in == 4096);
  auto g = parse_squid_line("1733500001.000 10.231.0.2 GET http://mirror.test:8080/repo/solution.tar?x=1 403 TCP_DENIED/HIER_NONE - 120 3400");
  REQUIRE(g);
  CHECK(g->host == "mirror.test");
  CHECK(g->port == 8080);
  CHECK(g->path == "/repo/solution.tar?x=1");
  CHECK(g->outcome == "denied");
  CHECK_FALSE(parse_squid_line("2026/12/06 21:00:00| Starting Squid Cache"));
}

TEST_CASE("egress: both logs merged in time order, phases and sources named, bounded") {
  EgressLogs logs;
  logs.resolver =
      R"({"t":1000,"phase":"","kind":"dns","from":"10.0.0.2","host":"evil.test","what":"TXT","outcome":"refused","answers":[]})"
      "\n"
      R"({"t":3000,"phase":"","kind":"dns","from":"10.0.0.9","host":"late.test","what":"A","outcome":"refused","answers":[]})"
      "\n";
  logs.proxy = "2.000 10.0.0.2 CONNECT a.test:443 403 TCP_DENIED/HIER_NONE - 10 20\nnot a log line\n";
  std::vector<PhaseMark> marks{{500, "setup"}, {1500, "agent"}, {2500, "grade"}};
  auto l = egress_ledger(logs, marks, {{"10.0.0.2", "runner"}});
  REQUIRE(l.entries.size() == 3);
  CHECK(l.dropped == 0);  // squid's other lines are not requests
  CHECK(l.entries[0].host == "evil.test");
  CHECK(l.entries[0].phase == "setup");
  CHECK(l.entries[0].from == "runner");
  CHECK(l.entries[1].kind == EgressKind::kHttp);
  CHECK(l.entries[1].phase == "agent");
  CHECK(l.entries[2].phase == "grade");
  CHECK(l.entries[2].from == "10.0.0.9");  // an address nobody holds stays an address

  // The file round-trips, and the resolver's own count of lines it did not log is kept.
  logs.resolver += R"({"kind":"dropped","total":7})" "\n" R"({"kind":"dropped","total":12})" "\n";
  auto again = parse_egress_jsonl(egress_jsonl(egress_ledger(logs, marks, {})));
  CHECK(again.entries.size() == 3);
  CHECK(again.dropped == 12);
  CHECK(again.entries[1].port == 443);

  std::string flood;
  for (std::size_t i = 0; i < kMaxEgressEntries + 5; ++i)
    flood += R"({"t":)" + std::to_string(i) + R"(,"kind":"dns","from":"x","host":"n.test","what":"A","outcome":"refused"})" "\n";
  auto bounded = egress_ledger({flood, ""}, marks, {});
  CHECK(bounded.entries.size() == kMaxEgressEntries);
  CHECK(bounded.dropped == 5);
}
