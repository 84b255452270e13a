// `forgectl show`: text and JSON views of a run directory.
#include "results/show.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "core/files.h"
#include "core/json.h"
#include "results/canary.h"
#include "results/compare.h"
#include "results/egress_view.h"
#include "results/html_text.h"
#include "results/metrics.h"
#include "results/trial_detail.h"
#include "results/trial_page.h"

namespace forge::results {

namespace fs = std::filesystem;

namespace {

std::string pct(const Summary& s) { return s.graded ? fmt_num("%.1f%%", s.pass_rate * 100) : "n/a"; }

std::string agent_line(const std::string& agent, const Summary& s) {
  std::string out =
      agent + ": " + std::to_string(s.passed) + "/" + std::to_string(s.graded) + " graded passed (" + pct(s) + ")";
  if (s.graded) {
    out += ", pass@1 " + fmt_num("%.1f%%", s.pass_at_1.mean * 100) + " [" + fmt_num("%.0f", s.pass_at_1.ci95.lo * 100) +
           ", " + fmt_num("%.0f%%", s.pass_at_1.ci95.hi * 100) + "]";
    out += ", mean score " + fmt_num("%.3f", s.score.mean) + " [" + fmt_num("%.3f", s.score.ci95.lo) + ", " +
           fmt_num("%.3f", s.score.ci95.hi) + "]";
  }
  out += ", " + std::to_string(s.infra_errors) + " infra error(s), " + money(s.cost_usd, s.cost_unknown, s.trials);
  if (s.passed && !s.cost_unknown) out += " (" + fmt_num("$%.4f", s.cost_usd / s.passed) + " per pass)";
  return out;
}

std::string outcome_word(const TrialRecord& t) {
  if (!t.invalid.empty()) return "INVALID-RECORD(" + t.invalid + ")";
  if (!t.graded()) return "INFRA-ERROR(" + std::string(to_string(t.infra_kind)) + ")";
  return t.binary_pass ? "pass" : "fail";
}

std::vector<const TrialRecord*> select(const std::vector<TrialRecord>& trials, const ShowRequest& r) {
  std::vector<const TrialRecord*> out;
  for (const auto& t : trials) {
    if (r.task && t.task_id != *r.task) continue;
    if (r.index && t.trial_index != *r.index) continue;
    if (!r.agent.empty() && t.agent != r.agent) continue;
    out.push_back(&t);
  }
  std::stable_sort(out.begin(), out.end(), [](const TrialRecord* a, const TrialRecord* b) {
    if (a->task_id != b->task_id) return a->task_id < b->task_id;
    return a->agent != b->agent ? a->agent < b->agent : a->trial_index < b->trial_index;
  });
  return out;
}

std::string list_of(const std::set<std::string>& xs) {
  std::string out;
  for (const auto& x : xs) out += (out.empty() ? "" : ", ") + x;
  return out;
}

Result<std::string> run_view(const ShowRequest& r, const std::vector<TrialRecord>& records) {
  // The agents' numbers without the canaries' (results/canary.h); the canaries get a line of their own.
  SplitTrials split = split_canaries(records);
  const std::vector<TrialRecord>& trials = r.agent.empty() || r.agent.rfind(kCanaryPrefix, 0) != 0 ? split.agents : records;
  CanaryReport canaries = canary_report(r.agent.empty() ? split.canaries : std::vector<TrialRecord>{});
  std::string run_id, status;
  if (auto text = read_text(fs::path(r.dir) / "run.json"))
    if (auto d = json::parse(*text, "run.json"); d && d->IsObject()) {
      run_id = json::get_string(*d, "run_id");
      status = json::get_string(*d, "status");
    }
  std::map<std::string, std::vector<const TrialRecord*>> by_agent;
  std::set<std::string> tasks;
  for (const auto& t : trials) {
    if (!r.agent.empty() && t.agent != r.agent) continue;
    by_agent[t.agent].push_back(&t);
    tasks.insert(t.task_id);
  }
  for (const auto& t : canaries.tasks) tasks.insert(t.task_id);
  auto comparisons = r.agent.empty() ? compare_all(trials, r.aggregate.compare) : std::vector<Comparison>{};
  if (r.json) {
    auto agg = aggregate_json(records, r.aggregate);
    if (!agg) return agg.fail();
    auto d = json::parse(*agg, "aggregate");
    if (!d) return d.fail();
    json::Writer w;
    w.begin_object().field("run_id", run_id).field("status", status).key("agents").begin_object();
    for (const auto& [agent, sel] : by_agent)
      if (const json::Value* s = json::get_object(*json::get_object(*d, "by_agent"), agent.c_str()))
        w.key(agent).raw_value(json::to_string(*s));
    w.end_object().key("comparisons").raw_value(json::to_string((*d)["comparisons"]));
    if (d->HasMember("canaries") && r.agent.empty()) w.key("canaries").raw_value(json::to_string((*d)["canaries"]));
    w.field("tasks", std::vector<std::string>(tasks.begin(), tasks.end())).end_object();
    return w.take() + "\n";
  }
  std::string out = "run " + (run_id.empty() ? std::string("(no run.json)") : run_id) +
                    (status.empty() ? "" : " (" + status + ")") + ": " + std::to_string(tasks.size()) + " task(s), " +
                    std::to_string(by_agent.size()) + " agent(s)\n";
  for (const auto& [agent, sel] : by_agent) out += "  " + agent_line(agent, summarize(sel)) + "\n";
  for (const auto& c : comparisons) out += "  " + c.sentence + "\n";
  if (!canaries.empty()) {
    out += "  cheat canaries: " + std::to_string(canaries.cheated) + "/" + std::to_string(canaries.graded) +
           " graded canary trials passed\n";
    for (const auto& w : canary_warnings(canaries)) out += "  " + w + "\n";
  }
  out += "tasks: " + list_of(tasks) + "\n(forgectl show " + r.dir + " TASK for a task's trials)\n";
  return out;
}

std::string task_line(const TrialRecord& t) {
  std::string out = "  " + t.agent + " #" + std::to_string(t.trial_index) + "  " + outcome_word(t);
  if (t.graded()) out += " score " + fmt_num("%.3f", t.score);
  out += "  " + t.termination_reason + ", " + std::to_string(t.turns) + " turns, " + std::to_string(t.tool_calls) +
         " tool calls (" + std::to_string(t.tool_errors) + " errors)";
  if (auto w = wall_seconds(t)) out += ", " + fmt_num("%.1f s", *w);
  out += ", " + money(t.cost_usd, t.cost_known ? 0 : 1, 1);
  if (!t.runtime.empty()) out += ", " + t.runtime;
  if (!t.trial_dir.empty()) out += "  " + t.trial_dir;
  if (!t.error.empty()) out += "\n      " + shorten(t.error, 300);
  return out;
}

std::string indent(const std::string& text, const std::string& pad) {
  std::string out = pad;
  for (char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

// The screenshot files the trial's directory keeps, each with the message that returned it.
std::string screenshots_text(const TrialRecord& t, const TrialDetail& d) {
  std::string files;
  int n = 0;
  for (const auto& m : d.messages) {
    ++n;
    for (const auto& p : m.images) files += "  " + t.trial_dir + "/" + p + " (message " + std::to_string(n) + ")\n";
  }
  if (files.empty() && !t.screenshots_dropped) return "";
  return "\nscreenshots: " + std::to_string(t.screenshots) + " kept, " + std::to_string(t.screenshots_dropped) +
         " dropped\n" + files;
}

// A forked setup (docs/sweeps.md "Forks"): where the trial's starting state came from, and how
// many of the run's trials from the same snapshot started from a workspace hashing alike.
std::string snapshot_text(const TrialRecord& t, const std::vector<TrialRecord>& all) {
  if (t.snapshot_source.empty()) return "";
  std::size_t same = 0, from = 0;
  for (const auto& o : all) {
    if (o.snapshot_image != t.snapshot_image) continue;
    ++from;
    same += o.workspace_sha256 == t.workspace_sha256;
  }
  return "  setup: " + std::string(t.snapshot_source == "taken" ? "snapshotted as " : "forked from ") + t.snapshot_image +
         "\n  starting workspace sha256 " + t.workspace_sha256 + ": " + std::to_string(same) + " of the " +
         std::to_string(from) + " trial(s) of this snapshot started identical\n";
}

std::string trial_text(const TrialRecord& t, const TrialDetail* d) {
  std::string out = t.task_id + " · " + t.agent + " · trial " + std::to_string(t.trial_index) + " (attempt " +
                    std::to_string(t.attempt) + "): " + outcome_word(t);
  if (t.graded()) out += ", score " + fmt_num("%.3f", t.score);
  out += "\n  termination: " + t.termination_reason + "\n";
  if (!t.runtime.empty()) out += "  runtime: " + t.runtime + "\n";
  if (!t.error.empty()) out += "  error: " + t.error + "\n";
  out += "  started " + t.started_at + ", finished " + t.finished_at + "\n  phases:";
  for (const auto& [k, v] : t.phases_s) out += " " + k + " " + fmt_num("%.2fs", v);
  out += "\n  " + std::to_string(t.turns) + " turns, tokens " + std::to_string(t.tokens_input) + " in / " +
         std::to_string(t.tokens_output) + " out, " + money(t.cost_usd, t.cost_known ? 0 : 1, 1) + "\n";
  if (!d) return out + "  (no trial.json in " + t.trial_dir + ": see trajectory.yaml and grade.yaml)\n";
  out += "\ngrade:";
  for (const auto& [k, v] : d->components) out += " " + k + " " + fmt_num("%.3f", v);
  out += "\n";
  for (const auto& r : d->reasons) out += "  " + r + "\n";
  if (!d->state_diff_json.empty()) out += "state diff:\n" + indent(pretty_json(d->state_diff_json), "  ") + "\n";
  out += "\ntranscript:\n";
  int n = 0;
  for (const auto& m : d->messages) {
    out += "[" + std::to_string(++n) + "] " + m.role;
    if (m.role == "tool") out += " " + m.name + " (answers " + m.tool_call_id + ")";
    out += ":\n";
    if (!m.reasoning.empty()) out += "  (reasoning)\n" + indent(m.reasoning, "    ") + "\n";
    if (!m.content.empty()) out += indent(m.content, "  ") + "\n";
    for (const auto& p : m.images) out += "  [screenshot] " + t.trial_dir + "/" + p + "\n";
    if (m.images_dropped) out += "  [" + std::to_string(m.images_dropped) + " screenshot(s) not kept]\n";
    for (const auto& c : m.tool_calls)
      out += "  → " + c.name + " " + c.id + "\n" + indent(pretty_json(c.arguments), "    ") + "\n";
  }
  out += screenshots_text(t, *d);
  if (!d->tool_log.empty()) {
    out += "\ntool calls as executed:\n";
    n = 0;
    for (const auto& l : d->tool_log)
      out += "  " + std::to_string(++n) + ". " + l.requestor + " " + l.tool + ": " + l.outcome + " in " +
             fmt_num("%.3fs", l.duration_s) + (l.error.empty() ? "" : ": " + l.error) + "\n";
  }
  return out;
}

Result<std::string> trials_view(const ShowRequest& r, const std::vector<TrialRecord>& trials) {
  auto picked = select(trials, r);
  if (picked.empty()) {
    std::set<std::string> tasks, agents, indexes;
    for (const auto& t : trials) {
      tasks.insert(t.task_id);
      agents.insert(t.agent);
      if (t.task_id == *r.task) indexes.insert(std::to_string(t.trial_index));
    }
    if (!tasks.count(*r.task))
      return fail(Errc::kInvalid, "no task '" + *r.task + "' in " + r.dir + " (tasks: " + list_of(tasks) + ")");
    if (!r.agent.empty() && !agents.count(r.agent))
      return fail(Errc::kInvalid, "no agent '" + r.agent + "' in " + r.dir + " (agents: " + list_of(agents) + ")");
    return fail(Errc::kInvalid, "task '" + *r.task + "' has no trial " + (r.index ? std::to_string(*r.index) : "") +
                                    (r.agent.empty() ? "" : " of " + r.agent) + " (trials: " + list_of(indexes) + ")");
  }
  if (!r.index) {
    if (r.json) {
      json::Writer w;
      w.begin_object().field("task_id", *r.task).key("trials").begin_array();
      for (const auto* t : picked) w.raw_value(to_json_line(*t));
      w.end_array().end_object();
      return w.take() + "\n";
    }
    std::string out = "task " + *r.task + ": " + std::to_string(picked.size()) + " trial(s)\n";
    for (const auto* t : picked) out += task_line(*t) + "\n";
    return out + "(forgectl show " + r.dir + " " + *r.task + " IDX [--agent A] for a trial's transcript and grade)\n";
  }
  std::string out;
  if (r.json) {
    json::Writer w;
    w.begin_array();
    for (const auto* t : picked) {
      w.begin_object().key("record").raw_value(to_json_line(*t)).key("detail");
      auto d = safe_trial_dir(t->trial_dir)
                   ? TrialDetail::read((fs::path(r.dir) / t->trial_dir / "trial.json").string())
                   : Result<TrialDetail>(fail(Errc::kNotFound, "no trial_dir"));
      if (d)
        w.raw_value(d->to_json());
      else
        w.null();
      w.end_object();
    }
    w.end_array();
    return w.take() + "\n";
  }
  for (const auto* t : picked) {
    if (!out.empty()) out += "\n────────\n\n";
    std::optional<TrialDetail> detail;
    if (safe_trial_dir(t->trial_dir)) {
      auto d = TrialDetail::read((fs::path(r.dir) / t->trial_dir / "trial.json").string());
      if (d)
        detail = std::move(*d);
      else if (d.error().code != Errc::kNotFound)
        return d.fail();
    }
    out += trial_text(*t, detail ? &*detail : nullptr);
    out += snapshot_text(*t, trials);
    if (!safe_trial_dir(t->trial_dir)) continue;
    auto egress = read_egress_ledger((fs::path(r.dir) / t->trial_dir).string());
    if (!egress) return egress.fail();
    if (*egress) out += "\n" + egress_text(**egress);
  }
  return out;
}

}  // namespace

std::string terminal_safe(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f)) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

Result<std::string> show(const ShowRequest& r) {
  std::error_code ec;
  if (!fs::is_directory(r.dir, ec)) return fail(Errc::kNotFound, "run directory '" + r.dir + "' does not exist");
  auto log = read_trials_jsonl((fs::path(r.dir) / "trials.jsonl").string());
  if (!log) return log.fail();
  if (!r.agent.empty()) {
    std::set<std::string> agents;
    for (const auto& t : log->trials) agents.insert(t.agent);
    if (!agents.count(r.agent))
      return fail(Errc::kInvalid, "no agent '" + r.agent + "' in " + r.dir + " (agents: " + list_of(agents) + ")");
  }
  auto text = r.task ? trials_view(r, log->trials) : run_view(r, log->trials);
  if (!text) return text;
  return r.json ? *text : terminal_safe(*text);
}

}  // namespace forge::results
