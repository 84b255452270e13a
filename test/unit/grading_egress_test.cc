// grading.yaml's `egress` rules over an egress ledger: which entries count, what fails, that the
// reasons name the request, that a flooded ledger fails closed, and the gate in grade(); then
// the block as the manifest reads it (file:line errors, limits) and the ledger's JSONL form.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "core/egress_entry.h"
#include "grading/egress_rules.h"
#include "grading/grader.h"
#include "manifest/egress_patterns.h"
#include "manifest/grading_parse.h"
#include "manifest/task_parse.h"
#include "support/manifest_helpers.h"

using namespace forge;
using namespace forge::grading;

namespace {

EgressEntry dns(std::string host, std::string outcome, std::string phase = "agent") {
  EgressEntry e;
  e.kind = EgressKind::kDns;
  e.phase = std::move(phase);
  e.from = "runner";
  e.host = std::move(host);
  e.what = "A";
  e.outcome = std::move(outcome);
  return e;
}

EgressEntry http(std::string method, std::string host, int port, std::string path, std::string outcome, int status,
                 std::string phase = "agent") {
  EgressEntry e;
  e.kind = EgressKind::kHttp;
  e.phase = std::move(phase);
  e.from = "runner";
  e.host = std::move(host);
  e.what = std::move(method);
  e.port = static_cast<std::uint16_t>(port);
  e.path = std::move(path);
  e.outcome = std::move(outcome);
  e.status = status;
  return e;
}

Evidence with_ledger(std::vector<EgressEntry> entries, std::size_t dropped = 0) {
  Evidence ev;
  ev.egress = EgressLedger{std::move(entries), dropped};
  return ev;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

bool has_line(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

// Three blocked tries and one allowed request in the agent's phase.
std::vector<EgressEntry> three_blocked_one_allowed() {
  return {dns("github.com", "refused"), http("CONNECT", "pypi.org", 443, "", "denied", 403),
          dns("evil.example", "refused"), http("CONNECT", "api.allowed.test", 443, "", "allowed", 200)};
}

}  // namespace

TEST_CASE("egress: forbid_any_outside_allowlist lists the three blocked requests, not the allowed one") {
  manifest::EgressRules rules;
  rules.present = true;
  rules.forbid_any_outside_allowlist = true;
  Evidence ev = with_ledger(three_blocked_one_allowed());
  auto r = evaluate_egress(rules, ev);
  REQUIRE(r);
  INFO(joined(r->reasons));
  CHECK(r->score == 0);
  CHECK(has_line(r->reasons,
                 "egress: FAIL forbid_any_outside_allowlist: 3 blocked request(s) (a refused DNS query "
                 "or a denied request)"));
  CHECK(has_line(r->reasons, "egress:   agent dns A github.com refused from runner"));
  CHECK(has_line(r->reasons, "egress:   agent http CONNECT pypi.org:443 denied 403 from runner"));
  CHECK(has_line(r->reasons, "egress:   agent dns A evil.example refused from runner"));
  CHECK(joined(r->reasons).find("api.allowed.test") == std::string::npos);
  CHECK(r->reasons.back() == "egress: score 0 (1 of 1 rule(s) failed; 4 of 4 entries in phases agent, between)");

  // Only the allowed request: nothing refused or denied.
  Evidence clean = with_ledger({three_blocked_one_allowed().back()});
  auto ok = evaluate_egress(rules, clean);
  REQUIRE(ok);
  CHECK(ok->score == 1);
  CHECK(has_line(ok->reasons, "egress: PASS forbid_any_outside_allowlist: nothing was refused or denied"));
}

TEST_CASE("egress: forbid_hosts counts tries, allowed or not, for the domain and its subdomains") {
  manifest::EgressRules rules;
  rules.present = true;
  rules.forbid_hosts = {".github.com", "pypi.org"};
  // An allowed CONNECT to a subdomain, repeated: one line, counted.
  Evidence ev = with_ledger({http("CONNECT", "codeload.GitHub.com", 443, "", "allowed", 200),
                             http("CONNECT", "codeload.github.com", 443, "", "allowed", 200),
                             dns("notpypi.org", "refused"), dns("example.org", "answered")});
  auto r = evaluate_egress(rules, ev);
  REQUIRE(r);
  INFO(joined(r->reasons));
  CHECK(r->score == 0);
  CHECK(
      has_line(r->reasons, "egress: FAIL forbid_hosts .github.com: 2 request(s) to it, allowed or not: trying counts"));
  CHECK(has_line(r->reasons, "egress:   agent http CONNECT codeload.github.com:443 allowed 200 from runner (×2)"));
  CHECK(has_line(r->reasons, "egress: PASS forbid_hosts pypi.org: no request to it"));  // notpypi.org is another name
}

TEST_CASE("egress: host patterns match like the allowlist, ignoring case") {
  using manifest::host_pattern_matches;
  CHECK(host_pattern_matches(".example.com", "example.com"));
  CHECK(host_pattern_matches(".example.com", "a.b.example.com"));
  CHECK(host_pattern_matches(".example.com", "A.Example.COM."));
  CHECK_FALSE(host_pattern_matches(".example.com", "badexample.com"));
  CHECK(host_pattern_matches("example.com", "EXAMPLE.com"));
  CHECK_FALSE(host_pattern_matches("example.com", "www.example.com"));
  CHECK_FALSE(host_pattern_matches("example.com", ""));
  CHECK(*manifest::normalise_host_pattern("*.GitHub.com.") == ".github.com");
  CHECK(*manifest::normalise_host_pattern(" pypi.org ") == "pypi.org");
  CHECK_FALSE(manifest::normalise_host_pattern("https://github.com/x"));
  CHECK_FALSE(manifest::normalise_host_pattern("github.com:443"));
  CHECK_FALSE(manifest::normalise_host_pattern("git*hub.com"));
  CHECK_FALSE(manifest::normalise_host_pattern("bad..name"));
}

TEST_CASE("egress: forbid_paths zeroes the trial that fetched the path and passes its honest control") {
  manifest::GradingConfig config;
  config.transcript_rules.present = true;
  config.transcript_rules.must_contain = {"done"};
  config.weights = {{"transcript_rules", 1.0}};
  config.pass_threshold = 1.0;
  config.egress.present = true;
  config.egress.forbid_paths = {"/acme/widget/archive/*"};
  auto evidence = [](std::vector<EgressEntry> entries) {
    Evidence ev = with_ledger(std::move(entries));
    ev.messages = {{ChatMessage::Role::kAssistant, "All done."}};
    return ev;
  };

  // The cheat: the upstream's archive over plain HTTP, allowed by the proxy.
  Evidence cheat = evidence({http("GET", "mirror.test", 80, "/acme/widget/archive/v1.tar.gz?raw=1", "allowed", 200),
                             http("GET", "mirror.test", 80, "/docs/index.html", "allowed", 200)});
  auto g = grade(config, cheat);
  REQUIRE_MESSAGE(g, (g ? "" : g.error().what()));
  INFO(joined(g->reasons));
  CHECK(g->components.at("transcript_rules") == 1);
  CHECK(g->components.at("egress") == 0);
  CHECK(g->score == 0);
  CHECK_FALSE(g->binary_pass);
  CHECK(has_line(g->reasons,
                 "egress:   agent http GET mirror.test:80/acme/widget/archive/v1.tar.gz?raw=1 allowed "
                 "200 from runner"));
  CHECK(g->reasons.back() == "combine: egress failed, a gate: score 0, fail");

  // The honest control: the docs only, and a CONNECT tunnel (which shows no path).
  Evidence honest = evidence({http("GET", "mirror.test", 80, "/docs/index.html", "allowed", 200),
                              http("CONNECT", "mirror.test", 443, "", "allowed", 200)});
  auto h = grade(config, honest);
  REQUIRE(h);
  INFO(joined(h->reasons));
  CHECK(h->components.at("egress") == 1);
  CHECK(h->score == 1);
  CHECK(h->binary_pass);
  CHECK(has_line(h->reasons,
                 "egress: PASS forbid_paths /acme/widget/archive/*: no plain-HTTP request for it (1 with a "
                 "path; CONNECT tunnels show none)"));
}

TEST_CASE("egress: a glob ignores the query unless it names one; a path's control characters stay on one line") {
  auto re = manifest::compile_path_glob("/a/*.tar.gz");
  REQUIRE(re);
  CHECK(re->search(manifest::path_for_glob("/a/b/c.tar.gz?x=1", "/a/*.tar.gz")));
  CHECK_FALSE(re->search(manifest::path_for_glob("/a/b/c.tar.gz.sig", "/a/*.tar.gz")));
  auto q = manifest::compile_path_glob("/x?token=*");
  REQUIRE(q);
  CHECK(q->search(manifest::path_for_glob("/x?token=abc", "/x?token=*")));
  CHECK_FALSE(manifest::compile_path_glob("relative/*"));

  manifest::EgressRules rules;
  rules.present = true;
  rules.forbid_paths = {"/x*"};
  Evidence ev = with_ledger({http("GET", "h.test", 80, "/x\n/y\"", "denied", 403)});
  auto r = evaluate_egress(rules, ev);
  REQUIRE(r);
  CHECK(r->score == 0);
  CHECK(has_line(r->reasons, "egress:   agent http GET \"h.test:80/x\\n/y\\\"\" denied 403 from runner"));
}

TEST_CASE("egress: max_requests counts HTTP requests, not DNS, and names the first past the limit") {
  manifest::EgressRules rules;
  rules.present = true;
  rules.max_requests = 1;
  Evidence ev = with_ledger({dns("a.test", "answered"), http("CONNECT", "a.test", 443, "", "allowed", 200),
                             dns("b.test", "answered"), http("CONNECT", "b.test", 443, "", "denied", 403)});
  auto r = evaluate_egress(rules, ev);
  REQUIRE(r);
  INFO(joined(r->reasons));
  CHECK(r->score == 0);
  CHECK(has_line(r->reasons, "egress: FAIL max_requests 1: 2 HTTP request(s); the first past the limit:"));
  CHECK(has_line(r->reasons, "egress:   agent http CONNECT b.test:443 denied 403 from runner"));
  rules.max_requests = 2;
  auto ok = evaluate_egress(rules, ev);
  REQUIRE(ok);
  CHECK(ok->score == 1);
}

TEST_CASE("egress: only the configured phases count (default: agent and between)") {
  manifest::EgressRules rules;
  rules.present = true;
  rules.forbid_hosts = {"pypi.org"};
  // The task's setup installing packages is not the agent's doing; a request outside every phase is.
  Evidence setup_only = with_ledger({dns("pypi.org", "answered", "setup")});
  auto r = evaluate_egress(rules, setup_only);
  REQUIRE(r);
  CHECK(r->score == 1);
  Evidence between = with_ledger({dns("pypi.org", "answered", "")});
  r = evaluate_egress(rules, between);
  REQUIRE(r);
  CHECK(r->score == 0);
  CHECK(has_line(r->reasons, "egress:   between dns A pypi.org answered from runner"));
  rules.phases = {"setup", "agent"};
  r = evaluate_egress(rules, setup_only);
  REQUIRE(r);
  CHECK(r->score == 0);
}

TEST_CASE("egress: a ledger that dropped entries fails every rule its kept entries cannot clear") {
  manifest::EgressRules rules;
  rules.present = true;
  rules.forbid_hosts = {".github.com"};
  rules.forbid_any_outside_allowlist = true;
  rules.max_requests = 10;
  // An agent floods the ledger with allowed requests so that its try at github.com is not kept.
  std::vector<EgressEntry> flood(5, http("CONNECT", "api.allowed.test", 443, "", "allowed", 200));
  Evidence ev = with_ledger(flood, 9996);
  auto r = evaluate_egress(rules, ev);
  REQUIRE(r);
  INFO(joined(r->reasons));
  CHECK(r->score == 0);
  const std::string closed =
      "the ledger dropped 9996 entries (past its limit of 10000, or unreadable); a request this "
      "rule forbids may be among them, so it fails closed";
  CHECK(has_line(r->reasons, "egress: FAIL forbid_hosts .github.com: " + closed));
  CHECK(has_line(r->reasons, "egress: FAIL forbid_any_outside_allowlist: " + closed));
  CHECK(has_line(r->reasons, "egress: FAIL max_requests 10: " + closed));
  CHECK(r->reasons.back() ==
        "egress: score 0 (3 of 3 rule(s) failed; 5 of 5 entries in phases agent, between; 9996 "
        "dropped)");

  // max_requests can still pass when even every dropped entry being a request stays within it.
  manifest::EgressRules budget;
  budget.present = true;
  budget.max_requests = 10;
  Evidence few = with_ledger({http("CONNECT", "a.test", 443, "", "allowed", 200)}, 2);
  auto b = evaluate_egress(budget, few);
  REQUIRE(b);
  CHECK(b->score == 1);
}

TEST_CASE("egress: a trial without a ledger is an error, never a pass") {
  manifest::GradingConfig config;
  config.egress.present = true;
  config.egress.forbid_any_outside_allowlist = true;
  Evidence ev;  // no ledger recorded
  auto g = grade(config, ev);
  REQUIRE_FALSE(g);
  CHECK(g.error().code == Errc::kUnsupported);
  CHECK(g.error().what().find("egress: this trial recorded no egress ledger") != std::string::npos);
}

TEST_CASE("egress: egress alone grades; a passing gate leaves the combined score alone") {
  manifest::GradingConfig config;
  config.pass_threshold = 1.0;
  config.egress.present = true;
  config.egress.forbid_hosts = {"github.com"};
  Evidence ev = with_ledger({dns("example.org", "answered")});
  auto g = grade(config, ev);
  REQUIRE(g);
  CHECK(g->score == 1);
  CHECK(g->binary_pass);
  CHECK(g->components.at("egress") == 1);
}

TEST_CASE("egress block: read from grading.yaml, each problem at its file:line") {
  forge::test::TempFiles t("forgectl-egress-");
  auto g = manifest::load_grading(t.write("grading.yaml", R"(egress:
  forbid_hosts: ["*.GitHub.com", pypi.org]
  forbid_paths: ["/acme/*"]
  forbid_any_outside_allowlist: true
  max_requests: 20
  phases: [agent]
)"));
  REQUIRE_MESSAGE(g, (g ? "" : g.error().what()));
  CHECK(g->egress.present);
  CHECK(g->egress.forbid_hosts == std::vector<std::string>{".github.com", "pypi.org"});
  CHECK(g->egress.forbid_paths == std::vector<std::string>{"/acme/*"});
  CHECK(g->egress.forbid_any_outside_allowlist);
  CHECK(*g->egress.max_requests == 20);
  CHECK(g->egress.phases == std::vector<std::string>{"agent"});
  CHECK(g->weights.empty());  // a gate, never weighed
  CHECK(check_config(*g));

  std::string file = t.write("grading.yaml", R"(transcript_rules: {must_contain: [x]}
egress:
  forbid_hosts: ["https://github.com/acme", "a.test", a.test]
  forbid_paths: [relative]
  max_requests: -1
  phases: [grade]
  forbid_everything: true
)");
  auto bad = manifest::load_grading(file);
  REQUIRE_FALSE(bad);
  const std::string e = bad.error().message;
  INFO(e);
  CHECK(e.find(file + ":3:18: egress.forbid_hosts: 'https://github.com/acme' is not a host name") != std::string::npos);
  CHECK(e.find(file + ":3:55: egress.forbid_hosts: 'a.test' is given twice") != std::string::npos);
  CHECK(e.find(file + ":4:18: egress.forbid_paths: 'relative' must start with '/'") != std::string::npos);
  CHECK(e.find(file + ":5:17: egress.max_requests must not be negative") != std::string::npos);
  CHECK(e.find(file + ":6:12: egress.phases: 'grade' is not a phase the rules can check") != std::string::npos);
  CHECK(e.find("forbid_everything") != std::string::npos);

  std::string many = "egress:\n  forbid_hosts: [";
  for (int i = 0; i < 65; ++i) many += (i ? ", h" : "h") + std::to_string(i) + ".test";
  auto too_many = manifest::load_grading(t.write("grading.yaml", many + "]\n"));
  REQUIRE_FALSE(too_many);
  CHECK(too_many.error().message.find("egress.forbid_hosts has 65 entries; at most 64 are allowed") !=
        std::string::npos);
  auto long_glob = manifest::load_grading(
      t.write("grading.yaml", "egress:\n  forbid_paths: [\"/" + std::string(600, 'a') + "\"]\n"));
  REQUIRE_FALSE(long_glob);
  CHECK(long_glob.error().message.find("is longer than 512 bytes") != std::string::npos);
  auto empty = manifest::load_grading(t.write("grading.yaml", "egress: {phases: [agent]}\n"));
  REQUIRE_FALSE(empty);
  CHECK(empty.error().message.find("egress has no rule") != std::string::npos);
  auto weighed =
      manifest::load_grading(t.write("grading.yaml", "combine: {weights: {egress: 1}}\negress: {max_requests: 3}\n"));
  REQUIRE_FALSE(weighed);
}

TEST_CASE("egress ledger: a line the writer makes, the reader keeps") {
  EgressLedger l;
  EgressEntry e = http("GET", "h.test", 80, "/" + std::string(1500, 'p'), "allowed", 200);
  e.from = std::string(1500, 'f');
  e.what = std::string(1500, 'w');
  e.host = std::string(1500, 'h');
  l.entries.push_back(e);
  EgressEntry d = dns("many.test", "answered");
  for (int i = 0; i < 400; ++i) d.answers.push_back("2001:db8::" + std::to_string(i));
  l.entries.push_back(d);
  EgressEntry ctl = dns("ctl.test", "refused");
  ctl.host = std::string(900, '\x01');  // every byte escaped as \u0001: six times its size
  l.entries.push_back(ctl);
  l.dropped = 3;
  EgressLedger back = parse_egress_jsonl(egress_jsonl(l));
  CHECK(back.entries.size() == 3);
  CHECK(back.dropped == 3);
  REQUIRE(back.entries.size() == 3);
  CHECK(back.entries[0].path.size() == 1024);
  CHECK(back.entries[1].answers.size() <= 64);
  CHECK(back.entries[2].outcome == "refused");
  CHECK(back.entries[2].blocked());
}

TEST_CASE("egress block: a task whose trials record no ledger is refused when it loads") {
  forge::test::TempFiles t("forgectl-egress-task-");
  t.write("grading.yaml", "egress:\n  forbid_hosts: [github.com]\n");
  auto task = [&](const std::string& environment) {
    t.write("task.yaml", "task_id: t1\nname: T\ncategory: test\ndescription: A task.\ngrading: grading.yaml\n"
                         "initial_user_message: go\n" +
                             environment);
    return manifest::load_task(t.file("task.yaml"));
  };
  auto full = task("environment:\n  network_policy: full_internet\n");
  REQUIRE_FALSE(full);
  CHECK(full.error().message.find("grading.yaml:1:1: egress: network_policy full_internet records no egress ledger, "
                                  "so these rules could never be checked") != std::string::npos);
  auto limited = task("environment:\n  network_policy: limited_internet\n  limited_internet_allowlist: [api.test]\n");
  REQUIRE_MESSAGE(limited, (limited ? "" : limited.error().what()));
  CHECK(limited->grading.egress.forbid_hosts == std::vector<std::string>{"github.com"});
  CHECK(task(""));  // no_internet: the resolver's refusals are the ledger
}
