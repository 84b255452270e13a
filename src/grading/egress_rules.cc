// The egress rules: which ledger entries count, which break a rule, and how the reasons name them.
#include "grading/egress_rules.h"

#include <algorithm>
#include <map>

#include "core/strings.h"
#include "manifest/egress_patterns.h"

namespace forge::grading {

namespace {

constexpr std::size_t kListedRequests = 10;  // distinct requests a failing rule names
constexpr std::size_t kShownBytes = 200;     // of a host or path in a reason

std::string phase_of(const EgressEntry& e) { return e.phase.empty() ? "between" : e.phase; }

// Host and path as a reason shows them: as they are when plain, else quoted (a control character
// or a quote in the agent's text must not break the reason's line).
std::string shown(std::string_view s) {
  bool plain = s.size() <= kShownBytes && std::none_of(s.begin(), s.end(), [](char c) {
                 return static_cast<unsigned char>(c) < 0x20 || c == '"' || c == 0x7f;
               });
  return plain ? std::string(s) : quote(s, kShownBytes);
}

// One request as a reason names it: "agent http CONNECT github.com:443 denied 403 from runner".
// Host names compare without case, so a name in capitals is the same request.
std::string describe(const EgressEntry& e) {
  std::string out = phase_of(e) + " " + egress_kind_name(e.kind) + " " + shown(e.what) + " ";
  const std::string host = to_lower(e.host);
  if (e.kind == EgressKind::kHttp)
    out += shown(host + ":" + std::to_string(e.port) + e.path);
  else
    out += shown(host);
  out += " " + shown(e.outcome);
  if (e.kind == EgressKind::kHttp && e.status) out += " " + std::to_string(e.status);
  if (!e.from.empty()) out += " from " + shown(e.from);
  return out;
}

// The requests that broke one rule: distinct descriptions in first-seen order, each counted.
class Offenders {
 public:
  void add(const EgressEntry& e) {
    ++total_;
    std::string d = describe(e);
    auto it = index_.find(d);
    if (it != index_.end()) {
      ++order_[it->second].second;
      return;
    }
    index_.emplace(d, order_.size());
    order_.emplace_back(std::move(d), 1);
  }
  std::size_t total() const { return total_; }
  // The indented lines under a FAIL line.
  void list(std::vector<std::string>& reasons) const {
    for (std::size_t i = 0; i < order_.size() && i < kListedRequests; ++i)
      reasons.push_back(std::string(kEgress) + ":   " + order_[i].first +
                        (order_[i].second > 1 ? " (×" + std::to_string(order_[i].second) + ")" : ""));
    if (order_.size() > kListedRequests)
      reasons.push_back(std::string(kEgress) + ":   … and " + std::to_string(order_.size() - kListedRequests) +
                        " more distinct request(s)");
  }

 private:
  std::size_t total_ = 0;
  std::map<std::string, std::size_t> index_;
  std::vector<std::pair<std::string, std::size_t>> order_;
};

// Grading one ledger: the counted entries, the reasons, how many rules failed.
struct Run {
  const manifest::EgressRules& rules;
  const EgressLedger& ledger;
  std::vector<const EgressEntry*> counted;
  std::vector<std::string> reasons;
  int rules_checked = 0, rules_failed = 0;

  void pass(const std::string& rule, const std::string& why) {
    ++rules_checked;
    reasons.push_back(std::string(kEgress) + ": PASS " + rule + ": " + why);
  }
  void broken(const std::string& rule, const std::string& why, const Offenders* o = nullptr) {
    ++rules_checked;
    ++rules_failed;
    reasons.push_back(std::string(kEgress) + ": FAIL " + rule + ": " + why);
    if (o) o->list(reasons);
  }
  // A rule the kept entries did not break, on a ledger that dropped some: fails closed.
  bool failed_closed(const std::string& rule) {
    if (ledger.dropped == 0) return false;
    broken(rule, "the ledger dropped " + std::to_string(ledger.dropped) + " entries (past its limit of " +
                   std::to_string(kMaxEgressEntries) +
                   ", or unreadable); a request this rule forbids may be among them, so it fails closed");
    return true;
  }
};

std::string count_of(std::size_t n, const char* what) { return std::to_string(n) + " " + what; }

void forbid_host(Run& run, const std::string& pattern) {
  Offenders o;
  for (const EgressEntry* e : run.counted)
    if (manifest::host_pattern_matches(pattern, e->host)) o.add(*e);
  const std::string rule = "forbid_hosts " + pattern;
  if (o.total() > 0)
    run.broken(rule, count_of(o.total(), "request(s) to it, allowed or not: trying counts"), &o);
  else if (!run.failed_closed(rule))
    run.pass(rule, "no request to it");
}

void forbid_path(Run& run, const std::string& glob) {
  const std::string rule = "forbid_paths " + glob;
  auto re = manifest::compile_path_glob(glob);  // check_egress_config compiled it already
  Offenders o;
  std::size_t with_path = 0;
  for (const EgressEntry* e : run.counted) {
    if (e->kind != EgressKind::kHttp || e->path.empty()) continue;
    ++with_path;
    if (re && re->search(manifest::path_for_glob(e->path, glob))) o.add(*e);
  }
  if (o.total() > 0)
    run.broken(rule, count_of(o.total(), "plain-HTTP request(s) for it, allowed or not: trying counts"), &o);
  else if (!run.failed_closed(rule))
    run.pass(rule,
             "no plain-HTTP request for it (" + count_of(with_path, "with a path") + "; CONNECT tunnels show none)");
}

void forbid_outside(Run& run) {
  Offenders o;
  for (const EgressEntry* e : run.counted)
    if (e->blocked()) o.add(*e);
  const std::string rule = "forbid_any_outside_allowlist";
  if (o.total() > 0)
    run.broken(rule, count_of(o.total(), "blocked request(s) (a refused DNS query or a denied request)"), &o);
  else if (!run.failed_closed(rule))
    run.pass(rule, "nothing was refused or denied");
}

void max_requests(Run& run, std::int64_t max) {
  const std::string rule = "max_requests " + std::to_string(max);
  std::size_t n = 0;
  const EgressEntry* crossed = nullptr;  // the request past the limit
  for (const EgressEntry* e : run.counted)
    if (e->kind == EgressKind::kHttp && ++n == static_cast<std::size_t>(max) + 1) crossed = e;
  if (crossed) {
    Offenders o;
    o.add(*crossed);
    run.broken(rule, count_of(n, "HTTP request(s); the first past the limit:"), &o);
  } else if (n + run.ledger.dropped > static_cast<std::size_t>(max)) {
    run.failed_closed(rule);
  } else {
    run.pass(rule, count_of(n, "HTTP request(s)"));
  }
}

std::string phases_text(const manifest::EgressRules& rules) {
  std::string out;
  for (const auto& p : rules.phases) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace

Status check_egress_config(const manifest::EgressRules& rules) {
  if (rules.phases.empty()) return fail(Errc::kInvalid, "egress.phases is empty");
  for (const auto& h : rules.forbid_hosts) {
    auto n = manifest::normalise_host_pattern(h);
    if (!n || *n != h) return fail(Errc::kInvalid, "egress.forbid_hosts: '" + h + "' is not a normalised host pattern");
  }
  for (const auto& g : rules.forbid_paths)
    if (auto re = manifest::compile_path_glob(g); !re)
      return fail(Errc::kInvalid, "egress.forbid_paths: '" + g + "' " + re.error().message);
  if (rules.max_requests && *rules.max_requests < 0) return fail(Errc::kInvalid, "egress.max_requests is negative");
  return {};
}

Result<ComponentResult> evaluate_egress(const manifest::EgressRules& rules, const Evidence& evidence) {
  if (!evidence.egress)
    return fail(Errc::kUnsupported,
                "this trial recorded no egress ledger (a full_internet or local-executor trial records none), "
                "so its egress rules cannot be checked");
  Run run{rules, *evidence.egress, {}, {}, 0, 0};
  for (const auto& e : run.ledger.entries)
    if (std::find(rules.phases.begin(), rules.phases.end(), phase_of(e)) != rules.phases.end())
      run.counted.push_back(&e);
  for (const auto& h : rules.forbid_hosts) forbid_host(run, h);
  for (const auto& g : rules.forbid_paths) forbid_path(run, g);
  if (rules.forbid_any_outside_allowlist) forbid_outside(run);
  if (rules.max_requests) max_requests(run, *rules.max_requests);
  ComponentResult r;
  r.score = run.rules_failed == 0 ? 1 : 0;
  r.reasons = std::move(run.reasons);
  std::string how = std::to_string(run.rules_failed) + " of " + std::to_string(run.rules_checked) +
                    " rule(s) failed; " + std::to_string(run.counted.size()) + " of " +
                    std::to_string(run.ledger.entries.size()) + " entries in phases " + phases_text(rules);
  if (run.ledger.dropped) how += "; " + std::to_string(run.ledger.dropped) + " dropped";
  r.reasons.push_back(std::string(kEgress) + ": score " + format_score(r.score) + " (" + how + ")");
  return r;
}

}  // namespace forge::grading
