// One trial's page.
#include "results/trial_page.h"

#include <map>

#include "core/json.h"
#include "results/html_text.h"
#include "results/metrics.h"
#include "results/egress_view.h"
#include "results/screenshots.h"

namespace forge::results {

namespace {

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1a1a1a;max-width:1100px}
h1{font-size:19px;overflow-wrap:anywhere}h2{font-size:16px;margin-top:28px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:8px 0;display:block;max-width:100%;overflow-x:auto}td,th{padding:3px 10px;border-bottom:1px solid #e4e4e4;text-align:left;vertical-align:top}
th{background:#f5f5f5}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}.muted{color:#555}
code,pre{white-space:pre-wrap;overflow-wrap:anywhere;font:12px/1.4 ui-monospace,monospace}pre{margin:4px 0;padding:6px 8px;background:#fafafa;border:1px solid #eee}
.msg{border:1px solid #ddd;border-left-width:5px;margin:10px 0;padding:6px 10px}
.msg .who{font-weight:600;font-size:13px}.system{border-left-color:#78909c}.user{border-left-color:#1565c0}
.assistant{border-left-color:#2e7d32}.tool{border-left-color:#e65100;background:#fffaf5}
.call{margin:6px 0 0 12px}.pass{color:#1b5e20;font-weight:600}.fail{color:#b71c1c;font-weight:600}.infra{color:#555;font-weight:600}
.reason{margin:2px 0}.stack{display:flex;height:14px;width:360px;background:#eee}.stack span{display:block;height:14px}
.key{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px;vertical-align:middle}
a{color:#0d47a1}.shot{display:block;margin:6px 0}.shot img{max-width:100%;border:1px solid #ccc}
)";

constexpr const char* kPhases[] = {"reserve", "up", "setup", "agent", "grade", "down"};
constexpr const char* kPhaseColours[] = {"#b0bec5", "#64b5f6", "#4db6ac", "#ffb74d", "#ba68c8", "#90a4ae"};

std::string row(const std::string& k, const std::string& v) { return "<tr><th>" + k + "</th><td>" + v + "</td></tr>"; }
std::string pre(const std::string& raw) { return "<pre>" + html_escape(raw) + "</pre>"; }

std::string verdict_html(bool graded, bool pass, const std::string& kind, const std::string& invalid = "") {
  if (!invalid.empty())
    return "<span class=\"infra\">invalid record: " + html_escape(invalid) + " (outside every rate)</span>";
  if (!graded)
    return "<span class=\"infra\">infra error" + (kind.empty() ? "" : " (" + html_escape(kind) + ")") + "</span>";
  return pass ? "<span class=\"pass\">pass</span>" : "<span class=\"fail\">fail</span>";
}

std::string phases_html(const std::map<std::string, double>& phases) {
  if (phases.empty()) return "<p class=\"muted\">No phase was timed.</p>";
  double total = 0;
  for (const auto& [k, v] : phases) total += v;
  std::string bar = "<div class=\"stack\">", legend, table = "<table><tr>";
  for (const char* p : kPhases) table += "<th>" + std::string(p) + "</th>";
  table += "<th>total</th></tr><tr>";
  for (std::size_t i = 0; i < std::size(kPhases); ++i) {
    auto it = phases.find(kPhases[i]);
    table += "<td class=\"n\">" + (it == phases.end() ? std::string("—") : fmt_num("%.3f s", it->second)) + "</td>";
    if (it != phases.end() && total > 0)
      bar += "<span style=\"width:" + fmt_num("%.1f", it->second / total * 100) + "%;background:" + kPhaseColours[i] +
             "\"></span>";
    legend += "<span class=\"key\" style=\"background:" + std::string(kPhaseColours[i]) + "\"></span>" + kPhases[i];
  }
  table += "<td class=\"n\">" + fmt_num("%.3f s", total) + "</td></tr></table>";
  return bar + "</div><p class=\"muted\">" + legend + "</p>" + table;
}

// A reason's verdict word, for its colour: the graders write "PASS"/"FAIL" (or "ok"/"mismatch").
std::string reason_html(const std::string& r) {
  std::string cls;
  if (r.find("FAIL") != std::string::npos)
    cls = "fail";
  else if (r.find("PASS") != std::string::npos)
    cls = "pass";
  std::string text = html_escape(r);
  return "<div class=\"reason\"><code" + (cls.empty() ? "" : " class=\"" + cls + "\"") + ">" + text + "</code></div>";
}

std::string grade_html(const TrialDetail& d) {
  bool graded = d.outcome == "graded";
  std::string out = "<h2>Grade</h2><table>" + row("result", verdict_html(graded, d.binary_pass, d.infra_kind)) +
                    row("score", graded ? fmt_num("%.3f", d.score) : "— (not graded)");
  for (const auto& [k, v] : d.components) out += row("component " + html_escape(k), fmt_num("%.3f", v));
  out += "</table>";
  if (d.reasons.empty()) return out + "<p class=\"muted\">No reasons recorded.</p>";
  // Reasons start with their component ("state_checks: …"): grouped under it, in order.
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (const auto& r : d.reasons) {
    auto colon = r.find(':');
    std::string comp = colon != std::string::npos && colon < 40 && r.find(' ') > colon ? r.substr(0, colon) : "other";
    if (groups.empty() || groups.back().first != comp) groups.push_back({comp, {}});
    groups.back().second.push_back(r);
  }
  for (const auto& [comp, rs] : groups) {
    out += "<h3>" + html_escape(comp) + "</h3>";
    for (const auto& r : rs) out += reason_html(r);
  }
  return out;
}

// A tool message's screenshots, where the agent took them: each file beside the page (paths the
// store writes only: TrialDetail::parse keeps no other), and a note for those dropped.
std::string images_html(const DetailMessage& m) {
  std::string out;
  for (const auto& p : m.images) {
    if (!is_screenshot_path(p)) continue;
    const std::string src = html_escape(p);
    out += "<a class=\"shot\" href=\"" + src + "\"><img src=\"" + src + "\" alt=\"screenshot " + src +
           "\" loading=\"lazy\"></a>";
  }
  if (m.images_dropped > 0)
    out += "<p class=\"muted\">" + std::to_string(m.images_dropped) +
           (m.images_dropped == 1 ? " screenshot was" : " screenshots were") +
           " not kept (past the record's limits; see docs/tools.md).</p>";
  return out;
}

std::string transcript_html(const TrialDetail& d) {
  std::string out = "<h2>Transcript</h2>";
  if (d.messages.empty()) return out + "<p class=\"muted\">No messages (the trial ended before the agent spoke).</p>";
  int n = 0;
  for (const auto& m : d.messages) {
    std::string role =
        m.role == "system" || m.role == "user" || m.role == "assistant" || m.role == "tool" ? m.role : "user";
    out += "<div class=\"msg " + role + "\"><div class=\"who\">#" + std::to_string(++n) + " " + html_escape(m.role);
    if (m.role == "tool")
      out +=
          " · " + html_escape(m.name) + " <span class=\"muted\">(answers " + html_escape(m.tool_call_id) + ")</span>";
    out += "</div>";
    if (!m.reasoning.empty())
      out += "<details><summary class=\"muted\">reasoning</summary>" + pre(m.reasoning) + "</details>";
    if (!m.content.empty()) out += pre(m.content);
    out += images_html(m);
    for (const auto& c : m.tool_calls) {
      out += "<div class=\"call\"><b>tool call</b> " + html_escape(c.name) + " <span class=\"muted\">" +
             html_escape(c.id) +
             (c.provider_id.empty() || c.provider_id == c.id ? ""
                                                             : " (the provider's " + html_escape(c.provider_id) + ")") +
             "</span>";
      if (!c.refusal.empty())
        out += "<div class=\"fail\">arguments " + html_escape(c.refusal) + "; what was kept of them:</div>";
      out += pre(c.refusal.empty() ? pretty_json(c.arguments) : c.arguments) + "</div>";
    }
    out += "</div>";
  }
  return out;
}

std::string tool_log_html(const TrialDetail& d) {
  std::string out = "<h2>Tool calls as executed</h2>";
  if (d.tool_log.empty()) return out + "<p class=\"muted\">No tool calls.</p>";
  out += "<table><tr><th>#</th><th>by</th><th>tool</th><th>outcome</th><th>time</th><th>arguments, result</th></tr>";
  int n = 0;
  for (const auto& t : d.tool_log) {
    bool ok = t.outcome == "ok";
    out += "<tr><td class=\"n\">" + std::to_string(++n) + "</td><td>" + html_escape(t.requestor) + "</td><td>" +
           html_escape(t.tool) + "</td><td class=\"" + (ok ? "pass" : "fail") + "\">" + html_escape(t.outcome) +
           "</td><td class=\"n\">" + fmt_num("%.3f s", t.duration_s) + "</td><td>" + pre(pretty_json(t.arguments));
    if (!t.error.empty()) out += "<div class=\"fail\">" + html_escape(t.error) + "</div>";
    out += pre(t.output) + (t.truncated ? "<span class=\"muted\">(output truncated)</span>" : "") + "</td></tr>";
  }
  return out + "</table>";
}

}  // namespace

std::string pretty_json(const std::string& text) {
  json::Document d;
  if (json::parse_document(d, text)) return text;  // bounded in size and depth, never recursive
  return json::to_pretty_string(d);
}

std::string render_trial_page(const TrialRecord& rec, const TrialDetail* d, std::string_view unreadable,
                              const EgressLedger* egress) {
  std::string back;
  for (int i = 0; i < depth_of(rec.trial_dir); ++i) back += "../";
  std::string title = rec.task_id + " · " + rec.agent + " · trial " + std::to_string(rec.trial_index);
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
      "content=\"width=device-width\"><title>" +
      html_escape(title) + "</title><style>" + kStyle + "</style></head><body><p><a href=\"" +
      html_escape(back + "report.html") + "\">← the run's report</a></p><h1>" + html_escape(title) + "</h1><table>";
  out += row("task", html_escape(rec.task_id) + (d && !d->task_name.empty() ? " — " + html_escape(d->task_name) : ""));
  out += row("agent", html_escape(rec.agent));
  out += row("trial", "#" + std::to_string(rec.trial_index) + ", attempt " + std::to_string(rec.attempt));
  out +=
      row("outcome", verdict_html(rec.graded(), rec.binary_pass, std::string(to_string(rec.infra_kind)), rec.invalid) +
                         (rec.graded() ? " · score " + fmt_num("%.3f", rec.score) : ""));
  out += row("termination", html_escape(rec.termination_reason));
  if (!rec.error.empty())
    out += row(rec.graded() ? "error" : "infra error", "<code>" + html_escape(rec.error) + "</code>");
  auto wall = wall_seconds(rec);
  out += row("started · finished", html_escape(rec.started_at) + " · " + html_escape(rec.finished_at) +
                                       (wall ? " (" + fmt_num("%.1f s", *wall) + ")" : ""));
  out += row("turns · tool calls · tool errors", std::to_string(rec.turns) + " · " + std::to_string(rec.tool_calls) +
                                                     " · " + std::to_string(rec.tool_errors));
  out += row("tokens in · out", std::to_string(rec.tokens_input) + " · " + std::to_string(rec.tokens_output));
  out += row("cost", money(rec.cost_usd, rec.cost_known ? 0 : 1, 1));
  if (rec.screenshots || rec.screenshots_dropped)
    out += row("screenshots", std::to_string(rec.screenshots) + " kept in screenshots/ · " +
                                  std::to_string(rec.screenshots_dropped) + " dropped");
  if (!rec.category.empty()) out += row("category", html_escape(rec.category));
  if (!rec.difficulty.empty()) out += row("difficulty", html_escape(rec.difficulty));
  if (!rec.tags.empty()) {
    std::string tags;
    for (const auto& t : rec.tags) tags += (tags.empty() ? "" : ", ") + html_escape(t);
    out += row("tags", tags);
  }
  if (!rec.docker_host.empty())
    out += row("engine", html_escape(rec.docker_host) +
                             (d && !d->stack.empty() ? " · stack " + html_escape(d->stack) : "") +
                             (rec.runtime.empty() ? "" : " · runtime " + html_escape(rec.runtime)));
  out += "</table><h2>Phases</h2>" + phases_html(rec.phases_s);
  if (!d && !unreadable.empty()) {
    out += "<h2>Transcript and grade</h2><p class=\"fail\">This trial's trial.json could not be read: <code>" +
           html_escape(unreadable) +
           "</code></p><p class=\"muted\">Its transcript is in trajectory.yaml and its grade in "
           "grade.yaml beside this page.</p>";
  } else if (!d) {
    out +=
        "<h2>Transcript and grade</h2><p class=\"muted\">This trial's directory has no trial.json (a run by an "
        "older forgectl): its transcript is in trajectory.yaml and its grade in grade.yaml beside this page.</p>";
  } else {
    out += grade_html(*d);
    if (!d->state_diff_json.empty()) out += "<h2>State diff</h2>" + pre(pretty_json(d->state_diff_json));
    out += transcript_html(*d) + tool_log_html(*d);
  }
  if (egress) out += egress_html(*egress);
  return out + "<p class=\"muted\">Written by forgectl report from trial.json.</p></body></html>\n";
}

}  // namespace forge::results
