// Failure classes for failed trials, in Tolokaforge's order of rules (reference/tolokaforge.md
// §6.8), from the trial record and its trial.json.
#include "results/failure_attribution.h"

#include <map>
#include <set>

#include "core/json.h"
#include "core/strings.h"
#include "results/aggregate.h"
#include "results/html_text.h"

namespace forge::results::tolokaforge {

namespace {

// How the episode ended without the model finishing: the time, the budget, or the model's own
// provider error (Tolokaforge's timeout / rate_limit / api_error / error).
bool resource_end(const std::string& termination) {
  return termination == "timeout" || termination == "budget_exhausted" || termination == "model_error";
}

bool mentions(const std::string& text, std::initializer_list<const char*> needles) {
  std::string lower = to_lower(text);
  for (const char* n : needles)
    if (lower.find(n) != std::string::npos) return true;
  return false;
}

// Tolokaforge's "failed" trajectory status has no forgectl counterpart: a graded trial either
// timed out or completed.
const char* status_of(const TrialRecord& t) { return t.termination_reason == "timeout" ? "timeout" : "completed"; }

struct Attribution {
  std::string failure_class = "model_reasoning";
  bool deterministic = false;
  json::Writer evidence;  // the array's items, written as they are found
  int items = 0;
  std::vector<std::string> tools;  // tools named by the evidence, for by_tool
};

void first_failed_call(Attribution& a, const TrialDetail& d) {
  for (std::size_t i = 0; i < d.tool_log.size(); ++i) {
    const auto& c = d.tool_log[i];
    if (c.outcome == "ok") continue;
    const std::string& text = c.error.empty() ? c.output : c.error;
    a.evidence.begin_object().field("kind", "tool_log").field("tool", c.tool).field("index", static_cast<int>(i));
    a.evidence.field("outcome", c.outcome).field("error", shorten(text, kEvidenceChars)).end_object();
    ++a.items;
    a.tools.push_back(c.tool);
    a.failure_class = mentions(text, {"invalid arguments", "validation"}) ? "tool_arguments" : "tool_execution";
    a.deterministic = true;
    return;
  }
}

void state_diff(Attribution& a, const TrialDetail& d) {
  if (d.state_diff_json.empty()) return;
  json::Document doc;
  std::vector<std::string> keys;
  if (!json::parse_document(doc, d.state_diff_json) && doc.IsObject())
    for (const auto& m : doc.GetObject()) keys.emplace_back(m.name.GetString(), m.name.GetStringLength());
  std::sort(keys.begin(), keys.end());
  a.evidence.begin_object().field("kind", "state_diff").field("keys", keys).end_object();
  ++a.items;
  a.failure_class = "grader_contract";
  a.deterministic = true;
}

// Connection errors in the transcript are evidence only, never the class: a graded trial had
// its infrastructure (forgectl's infra errors are outside graded trials, counted in the summary),
// and any text here was written by the agent or by its tools, so the agent could make its own
// failure look like an outage by writing "Connection refused".
void connection_errors(Attribution& a, const TrialDetail& d) {
  int count = 0;
  for (const auto& m : d.messages)
    if (m.content.find("ECONNREFUSED") != std::string::npos || m.content.find("net::ERR_") != std::string::npos ||
        mentions(m.content, {"connection refused", "err_connection_refused"}))
      ++count;
  if (count == 0) return;
  a.evidence.begin_object().field("kind", "connection_errors").field("count", count).end_object();
  ++a.items;
}

// The grade's failing reasons (at most 5), when nothing else was found, and a path_glob check
// that found no file when the agent never called write_file.
void grade_hints(Attribution& a, const TrialDetail& d) {
  if (a.items == 0) {
    std::vector<std::string> fails;
    for (const auto& r : d.reasons)
      if (mentions(r, {"fail"}) && fails.size() < 5) fails.push_back(shorten(r, kEvidenceChars));
    if (!fails.empty()) {
      a.evidence.begin_object().field("kind", "grade_fail_patterns").field("patterns", fails).end_object();
      ++a.items;
    }
  }
  bool no_file = false;
  for (const auto& r : d.reasons) no_file = no_file || mentions(r, {"no file matches", "no files match"});
  bool wrote = false;
  for (const auto& c : d.tool_log) wrote = wrote || c.tool == "write_file";
  if (no_file && !wrote) {
    a.evidence.begin_object().field("kind", "missing_tool").field("tool", "write_file");
    a.evidence.field("detail", "grading expects output files but write_file was never called").end_object();
    ++a.items;
  }
}

void attribute(const TrialRecord& t, const TrialDetail* d, Attribution& a) {
  a.evidence.begin_array();
  if (resource_end(t.termination_reason)) {
    a.failure_class = "timeout_or_resource";
    a.deterministic = true;
    a.evidence.begin_object().field("kind", "termination_reason").field("value", t.termination_reason);
    a.evidence.field("status", status_of(t)).end_object();
    ++a.items;
  } else if (d) {
    first_failed_call(a, *d);
    if (!a.deterministic) state_diff(a, *d);
    if (!a.deterministic) connection_errors(a, *d);
    grade_hints(a, *d);
  } else if (t.tool_errors > 0) {
    // Without trial.json only the count is known, not which call failed.
    a.failure_class = "tool_execution";
    a.deterministic = true;
    a.evidence.begin_object().field("kind", "tool_errors").field("count", t.tool_errors).end_object();
    ++a.items;
  }
  a.evidence.end_array();
}

}  // namespace

Result<std::string> failure_attribution_json(std::span<const TrialRecord* const> trials, const DetailOf& detail_of) {
  std::map<std::string, int> by_class, by_tool, infra_by_kind;
  int failed = 0, deterministic = 0;
  json::Writer list;
  list.begin_array();
  for (const auto* t : trials) {
    if (!t->graded()) {
      ++infra_by_kind[t->outcome == Outcome::kInfraError ? std::string(to_string(t->infra_kind))
                                                         : std::string(to_string(t->outcome))];
      continue;
    }
    if (t->binary_pass) continue;
    Attribution a;  // json::Writer does not move
    attribute(*t, detail_of ? detail_of(*t) : nullptr, a);
    ++failed;
    deterministic += a.deterministic;
    ++by_class[a.failure_class];
    for (const auto& tool : a.tools) ++by_tool[tool];
    list.begin_object().field("task_id", t->task_id).field("trial_index", t->trial_index);
    list.field("status", status_of(*t)).field("termination_reason", t->termination_reason);
    list.field("failure_class", a.failure_class).field("deterministic", a.deterministic);
    list.key("confidence").num(a.deterministic ? 1.0 : 0.5);
    list.key("evidence").raw_value(a.evidence.take());
    list.field("agent", t->agent).field("trial_dir", t->trial_dir).end_object();
  }
  list.end_array();

  json::Writer w;
  w.begin_object().key("summary").begin_object().field("total_failed_attempts", failed);
  w.key("deterministic_attribution_coverage");
  if (failed)
    w.num(static_cast<double>(deterministic) / failed);
  else
    w.null();
  w.key("by_failure_class").begin_object();
  for (const auto& [c, n] : by_class) w.field(c, n);
  w.end_object().key("by_tool").begin_object();
  for (const auto& [tool, n] : by_tool) w.field(tool, n);
  w.end_object();
  int infra = 0;
  for (const auto& [k, n] : infra_by_kind) infra += n;
  w.field("infra_errors", infra).key("infra_errors_by_kind").begin_object();
  for (const auto& [k, n] : infra_by_kind) w.field(k, n);
  w.end_object().end_object();
  w.key("failures").raw_value(list.take()).end_object();
  return indented_json(w.take());
}

}  // namespace forge::results::tolokaforge
