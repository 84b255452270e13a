// Reading trials.jsonl back: lenient about fields older versions did not write, strict about
// lines that are not JSON, except the last one a crash may have cut short.
#include "results/trial_record.h"

#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "core/files.h"
#include "core/json.h"
#include "core/limits.h"

namespace forge::results {

namespace {

std::map<std::string, double> number_map(const json::Value& obj, const char* key) {
  std::map<std::string, double> out;
  const json::Value* m = json::get_object(obj, key);
  if (!m) return out;
  for (const auto& e : m->GetObject())
    if (e.value.IsNumber()) out[std::string(e.name.GetString(), e.name.GetStringLength())] = e.value.GetDouble();
  return out;
}

// Fields without which a line cannot be placed in a group or a denominator.
Status check_required(const json::Value& d, std::string_view where) {
  for (const char* k : {"task_id", "agent", "outcome"}) {
    const json::Value* v = d.HasMember(k) ? &d[k] : nullptr;
    if (!v || !v->IsString())
      return fail(Errc::kInvalid, std::string(where) + ": \"" + k + "\" is missing or not a string");
  }
  std::string outcome = json::get_string(d, "outcome");
  if (!parse_outcome(outcome))
    return fail(Errc::kInvalid,
                std::string(where) + ": unknown outcome \"" + outcome + "\" (graded | infra_error | setup_error)");
  return {};
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

bool usable_amount(double v) { return std::isfinite(v) && v >= 0 && v <= limits::kMaxRecordAmount; }

// Why the record's numbers cannot be counted, or "" (TrialRecord::invalid). The offending
// numbers are set to 0 so that nothing downstream can sum them by mistake.
std::string check_numbers(TrialRecord& r) {
  std::string why;
  auto bad = [&](const std::string& what) {
    if (why.empty()) why = what;
  };
  if (!std::isfinite(r.score) || r.score < 0 || r.score > 1) {
    if (r.outcome == Outcome::kGraded) bad("score " + number_text(r.score) + " is not a number in [0, 1]");
    r.score = 0;
  }
  for (auto& [k, v] : r.components)
    if (!std::isfinite(v)) {
      bad("component '" + k + "' is not a finite number");
      v = 0;
    }
  auto amount = [&](double& v, const std::string& what) {
    if (usable_amount(v)) return;
    bad(what + " " + number_text(v) + " is not a number in [0, " + number_text(limits::kMaxRecordAmount) + "]");
    v = 0;
  };
  amount(r.cost_usd, "cost_usd");
  amount(r.duration_s, "duration_s");
  for (auto& [k, v] : r.phases_s) amount(v, "phases_s." + k);
  for (auto* n : {&r.tokens_input, &r.tokens_output, &r.turns, &r.tool_calls, &r.tool_errors})
    if (*n < 0 || static_cast<double>(*n) > limits::kMaxRecordAmount) {
      bad("a count (" + std::to_string(*n) + ") is not in [0, " + number_text(limits::kMaxRecordAmount) + "]");
      *n = 0;
    }
  return why;
}

// A line that is JSON but wrong is a bug to report, even at the end; only a torn write is skipped.
bool is_json(std::string_view line) {
  json::Document d;
  return !json::parse_document(d, line);
}

}  // namespace

Result<TrialRecord> parse_trial_line(std::string_view line, std::string_view where) {
  json::Document d;
  if (auto bad = json::parse_document(d, line))
    return fail(Errc::kInvalid,
                std::string(where) + ": not a JSON object (offset " + std::to_string(bad->offset) + ")");
  if (!d.IsObject()) return fail(Errc::kInvalid, std::string(where) + ": not a JSON object");
  if (auto st = check_required(d, where); !st) return st.fail();
  TrialRecord r;
  r.task_id = json::get_string(d, "task_id");
  r.trial_index = static_cast<int>(json::get_int(d, "trial_index"));
  r.attempt = static_cast<int>(json::get_int(d, "attempt", 1));
  r.agent = json::get_string(d, "agent");
  r.trial_key = json::get_string(d, "trial_key");
  r.binary_pass = json::get_bool(d, "binary_pass");
  r.score = json::get_double(d, "score");
  r.components = number_map(d, "components");
  r.termination_reason = json::get_string(d, "termination_reason");
  r.outcome = *parse_outcome(json::get_string(d, "outcome"));
  r.infra_kind = parse_infra_kind(json::get_string(d, "infra_kind")).value_or(InfraKind::kNone);
  r.error = json::get_string(d, "error");
  r.cost_usd = json::get_double(d, "cost_usd");
  r.tokens_input = json::get_int(d, "tokens_input");
  r.tokens_output = json::get_int(d, "tokens_output");
  r.turns = json::get_int(d, "turns");
  r.tool_calls = json::get_int(d, "tool_calls");
  r.tool_errors = json::get_int(d, "tool_errors");
  r.duration_s = json::get_double(d, "duration_s");
  r.phases_s = number_map(d, "phases_s");
  r.started_at = json::get_string(d, "started_at");
  r.finished_at = json::get_string(d, "finished_at");
  r.docker_host = json::get_string(d, "docker_host");
  r.runtime = json::get_string(d, "runtime");
  r.networks = json::get_string_map(d, "networks");
  r.trial_dir = json::get_string(d, "trial_dir");
  r.unconfined = json::get_bool(d, "unconfined");
  if (const auto* s = json::get_object(d, "screenshots")) {
    // Shown, never summed: a count out of range reads as none rather than voiding the line.
    auto count = [&](const char* k) {
      const std::int64_t n = json::get_int(*s, k);
      return n < 0 || static_cast<double>(n) > limits::kMaxRecordAmount ? 0 : n;
    };
    r.screenshots = count("kept");
    r.screenshots_dropped = count("dropped");
  }
  if (const auto* e = json::get_object(d, "egress")) {
    // Counted per trial, never summed: a count out of range reads as 0 rather than voiding the line.
    auto count = [&](const char* k) {
      const std::int64_t n = json::get_int(*e, k);
      return n < 0 || static_cast<double>(n) > limits::kMaxRecordAmount ? 0 : n;
    };
    r.egress_recorded = true;
    r.egress_entries = count("entries");
    r.egress_dropped = count("dropped");
    r.egress_blocked = count("blocked");
  }
  if (const auto* g = json::get_object(d, "golden")) {
    r.golden_source = json::get_string(*g, "source");
    r.golden_key = json::get_string(*g, "content_key");
    r.golden_replays = json::get_int(*g, "replays");
  }
  if (const auto* s = json::get_object(d, "snapshot")) {
    r.snapshot_source = json::get_string(*s, "source");
    r.snapshot_image = json::get_string(*s, "image");
    r.workspace_sha256 = json::get_string(*s, "workspace_sha256");
  }
  r.category = json::get_string(d, "category");
  r.tags = json::get_strings(d, "tags");
  r.difficulty = json::get_string(d, "difficulty");
  r.expected_failure_modes = json::get_strings(d, "expected_failure_modes");
  r.cost_known = json::get_bool(d, "cost_known", true);
  r.raw_line = std::string(line);
  r.invalid = check_numbers(r);
  return r;
}

std::string to_json_line(const TrialRecord& r) {
  json::Writer w;
  w.begin_object()
      .field("task_id", r.task_id)
      .field("trial_index", r.trial_index)
      .field("attempt", r.attempt)
      .field("agent", r.agent)
      .field("trial_key", r.trial_key)
      .field("binary_pass", r.graded() && r.binary_pass)
      .key("score").num(r.graded() ? r.score : 0.0)
      .key("components").begin_object();
  for (const auto& [k, v] : r.components) w.key(k).num(v);
  w.end_object().field("termination_reason", r.termination_reason).field("outcome", std::string(to_string(r.outcome)));
  if (r.error.empty()) w.key("error").null();
  else w.field("error", r.error);
  if (r.infra_kind == InfraKind::kNone) w.key("infra_kind").null();
  else w.field("infra_kind", std::string(to_string(r.infra_kind)));
  w.key("cost_usd").num(r.cost_usd)
      .field("tokens_input", r.tokens_input)
      .field("tokens_output", r.tokens_output)
      .field("turns", r.turns)
      .field("tool_calls", r.tool_calls)
      .field("tool_errors", r.tool_errors)
      .key("duration_s").num(r.duration_s);
  w.key("phases_s").begin_object();
  for (const auto& [k, v] : r.phases_s) w.key(k).num(v);
  w.end_object().field("started_at", r.started_at).field("finished_at", r.finished_at);
  w.field("docker_host", r.docker_host).field("trial_dir", r.trial_dir);
  if (!r.runtime.empty()) w.field("runtime", r.runtime);
  if (!r.networks.empty()) {
    w.key("networks").begin_object();
    for (const auto& [phase, policy] : r.networks) w.field(phase, policy);
    w.end_object();
  }
  if (r.unconfined) w.field("unconfined", true);
  if (r.screenshots || r.screenshots_dropped)
    w.key("screenshots")
        .begin_object()
        .field("kept", r.screenshots)
        .field("dropped", r.screenshots_dropped)
        .end_object();
  if (r.egress_recorded)
    w.key("egress")
        .begin_object()
        .field("entries", r.egress_entries)
        .field("dropped", r.egress_dropped)
        .field("blocked", r.egress_blocked)
        .end_object();
  if (!r.snapshot_source.empty())
    w.key("snapshot")
        .begin_object()
        .field("source", r.snapshot_source)
        .field("image", r.snapshot_image)
        .field("workspace_sha256", r.workspace_sha256)
        .end_object();
  if (!r.golden_source.empty())
    w.key("golden")
        .begin_object()
        .field("source", r.golden_source)
        .field("content_key", r.golden_key)
        .field("replays", r.golden_replays)
        .end_object();
  // Written only when the task declares them, so lines of tasks without labels stay as they were.
  if (!r.category.empty()) w.field("category", r.category);
  if (!r.tags.empty()) w.field("tags", r.tags);
  if (!r.difficulty.empty()) w.field("difficulty", r.difficulty);
  if (!r.expected_failure_modes.empty()) w.field("expected_failure_modes", r.expected_failure_modes);
  w.field("cost_known", r.cost_known);
  w.end_object();
  return w.take();
}

Result<TrialLog> parse_trials_jsonl(std::string_view text, std::string_view path) {
  std::vector<std::pair<std::size_t, std::string_view>> lines;  // (line number, text), blank ones dropped
  std::size_t number = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    ++number;
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) lines.emplace_back(number, line);
    pos = end + 1;
  }
  TrialLog log;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string where = std::string(path) + ":" + std::to_string(lines[i].first);
    auto r = parse_trial_line(lines[i].second, where);
    if (r) {
      log.trials.push_back(std::move(*r));
    } else if (i + 1 == lines.size() && !is_json(lines[i].second)) {
      ++log.skipped_last_lines;  // cut short by a crash mid-append; the trial reruns on resume
    } else {
      return r.fail();
    }
  }
  log.trials = last_record_wins(std::move(log.trials));
  return log;
}

Result<TrialLog> read_trials_jsonl(const std::string& path) {
  auto text = read_text(path);
  if (!text) return text.fail();
  return parse_trials_jsonl(*text, path);
}

std::string trial_identity(const TrialRecord& r) {
  if (!r.trial_key.empty()) return "k:" + r.trial_key;
  return "t:" + r.task_id + '\0' + r.agent + '\0' + std::to_string(r.trial_index);
}

std::vector<TrialRecord> last_record_wins(std::vector<TrialRecord> records) {
  std::unordered_map<std::string, std::size_t> last;  // key → index of its last record
  for (std::size_t i = 0; i < records.size(); ++i) last[trial_identity(records[i])] = i;
  std::vector<TrialRecord> out;
  out.reserve(last.size());
  for (std::size_t i = 0; i < records.size(); ++i)
    if (last[trial_identity(records[i])] == i) out.push_back(std::move(records[i]));
  return out;
}

}  // namespace forge::results
