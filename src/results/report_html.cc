// report.html, section by section, from aggregate.json's numbers and the trial records. Nothing
// pools agents unless the run has one: every table is per agent, and comparisons are paired.
#include "results/report_html.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "core/json.h"
#include "results/html_text.h"
#include "results/metrics.h"
#include "results/report_canary.h"
#include "results/report_svg.h"

namespace forge::results {

namespace {

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1a1a1a;max-width:1200px}
h1{font-size:20px;overflow-wrap:anywhere}h2{font-size:16px;margin-top:30px;border-bottom:1px solid #ccc}
h3{font-size:14px;margin:18px 0 4px}
table{border-collapse:collapse;margin:8px 0;display:block;max-width:100%;overflow-x:auto}td,th{padding:3px 10px;border-bottom:1px solid #e4e4e4;text-align:left;vertical-align:top}
th{background:#f5f5f5}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}td.n{white-space:nowrap}
.label{overflow-wrap:anywhere;min-width:12em;max-width:24em}.muted{color:#555}
svg.chart{max-width:100%;height:auto}.chart text{font-size:12px;fill:#222}.chart .axis{fill:#555;font-size:11px}
.key{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px;vertical-align:middle}
.line-key{display:inline-block;width:22px;height:0;border-top:3px solid;margin:0 4px 0 12px;vertical-align:middle}
.line-key.dash{border-top-style:dashed}
code,pre{white-space:pre-wrap;overflow-wrap:anywhere;font:12px/1.4 ui-monospace,monospace}
.sentence{font-size:15px;margin:6px 0;padding:6px 10px;border-left:4px solid #1565c0;background:#f3f7fc}
.sentence.none{border-color:#777;background:#f5f5f5}
.cell{min-width:110px}.bar{height:5px;background:#cfd8dc;margin-top:3px}.bar span{display:block;height:5px;background:#1b5e20}
.stack{display:flex;height:14px;min-width:2px;background:#eee}.stack span{display:block;height:14px}
.pass{color:#1b5e20;font-weight:600}.fail{color:#b71c1c;font-weight:600}.infra{color:#555;font-weight:600}
a{color:#0d47a1}
.invalid{font-size:15px;margin:10px 0;padding:10px 12px;border-left:6px solid #b71c1c;background:#fdecea}
)";

constexpr const char* kPalette[] = {"#1565c0", "#e65100", "#2e7d32", "#6a1b9a",
                                    "#c62828", "#00838f", "#4e342e", "#ad1457"};
constexpr const char* kPhases[] = {"reserve", "up", "setup", "agent", "grade", "down"};
constexpr const char* kPhaseColours[] = {"#b0bec5", "#64b5f6", "#4db6ac", "#ffb74d", "#ba68c8", "#90a4ae"};

using json::Value;

std::optional<double> opt_num(const Value* obj, const char* key) {
  if (!obj || !obj->IsObject() || !obj->HasMember(key) || !(*obj)[key].IsNumber()) return std::nullopt;
  return (*obj)[key].GetDouble();
}

std::string count(const Value* s, const char* key) { return std::to_string(s ? json::get_int(*s, key) : 0); }
int icount(const Value* s, const char* key) { return s ? static_cast<int>(json::get_int(*s, key)) : 0; }

std::string interval(const Value* s, const char* key, const char* f) {
  const Value* ci = s ? json::get_array(*s, key) : nullptr;
  if (!ci || ci->Size() != 2 || !(*ci)[0].IsNumber() || !(*ci)[1].IsNumber()) return "";
  return " [" + fmt_num(f, (*ci)[0].GetDouble()) + ", " + fmt_num(f, (*ci)[1].GetDouble()) + "]";
}

std::string score_with_ci(const Value* s) {
  auto mean = opt_num(s, "mean_score");
  if (!mean) return "n/a";
  return fmt_num("%.3f", *mean) + interval(s, "score_ci95", "%.3f");
}

std::string pass1_with_ci(const Value* s) {
  const Value* at = s ? json::get_object(*s, "pass_at_k") : nullptr;
  auto p = opt_num(at, "1");
  if (!p || !opt_num(s, "pass_rate")) return "n/a";
  const Value* ci = json::get_array(*s, "pass_at_1_ci95");
  std::string out = percent(p);
  if (ci && ci->Size() == 2 && (*ci)[0].IsNumber() && (*ci)[1].IsNumber())
    out +=
        " [" + fmt_num("%.0f", (*ci)[0].GetDouble() * 100) + ", " + fmt_num("%.0f%%", (*ci)[1].GetDouble() * 100) + "]";
  return out;
}

std::string cost_of(const Value* s) {
  return money(opt_num(s, "cost_usd").value_or(0), icount(s, "cost_unknown_trials"), icount(s, "trials"));
}

std::string cost_per_pass(const Value* s) {
  if (icount(s, "passed") == 0) return "no pass";
  auto v = opt_num(s, "cost_per_pass_usd");
  return v ? fmt_num("$%.4f", *v) : "cost unknown";
}

std::string td(const std::string& v, bool num = false) {
  return num ? "<td class=\"n\">" + v + "</td>" : "<td>" + v + "</td>";
}
std::string th(const std::string& v, bool num = false) {
  return num ? "<th class=\"n\">" + v + "</th>" : "<th>" + v + "</th>";
}
std::string label_td(const std::string& raw) { return "<td class=\"label\">" + html_escape(raw) + "</td>"; }

std::string seconds(std::optional<double> v) { return v ? fmt_num("%.2f s", *v) : "n/a"; }

// The agents' labels in aggregate order, with what run.json says each is.
struct Agents {
  std::vector<std::string> labels;
  std::map<std::string, std::string> about;  // label → "openai/gpt-4o, temperature 0.2"
  std::string colour(const std::string& label) const {
    auto it = std::find(labels.begin(), labels.end(), label);
    return kPalette[static_cast<std::size_t>(it - labels.begin()) % std::size(kPalette)];
  }
};

Agents agents_of(const Value* by_agent, const json::Document* run) {
  Agents a;
  if (by_agent && by_agent->IsObject())
    for (const auto& m : by_agent->GetObject()) a.labels.emplace_back(m.name.GetString(), m.name.GetStringLength());
  const Value* models = run ? json::get_object(*run, "models") : nullptr;
  for (const auto& l : a.labels) {
    if (l.rfind("llm:", 0) != 0 || !models) continue;
    const Value* m = json::get_object(*models, l.substr(4).c_str());
    if (!m) continue;
    std::string about = json::get_string(*m, "provider") + "/" + json::get_string(*m, "name");
    if (auto t = opt_num(m, "temperature")) about += ", temperature " + fmt_num("%g", *t);
    a.about[l] = about;
  }
  return a;
}

// The OCI runtimes the sandboxes ran under, with their trial counts: a runsc result is not a runc one.
std::string runtimes_line(const std::vector<TrialRecord>& trials) {
  std::map<std::string, int> counts;
  for (const auto& t : trials)
    if (!t.runtime.empty()) ++counts[t.runtime];
  if (counts.empty()) return "";
  std::string out = "<p>runtime:";
  for (const auto& [name, n] : counts)
    out += " <b>" + html_escape(name) + "</b> (" + std::to_string(n) + (n == 1 ? " trial)" : " trials)");
  return out + "</p>";
}

std::string run_header(const json::Document* run, const Agents& agents, const std::vector<TrialRecord>& trials) {
  std::string run_id = run ? json::get_string(*run, "run_id") : "";
  std::string out =
      "<h1>forgectl run " + html_escape(run_id.empty() ? "(no run.json)" : run_id) + "</h1><p class=\"muted\">";
  bool first = true;
  for (const char* k : {"status", "started_at", "finished_at"})
    if (run && !json::get_string(*run, k).empty()) {
      out += (first ? "" : " · ") + std::string(k) + ": " + html_escape(json::get_string(*run, k));
      first = false;
    }
  out += "</p><p>agents:";
  for (const auto& l : agents.labels) {
    out += "<span class=\"key\" style=\"background:" + agents.colour(l) + "\"></span><b>" + html_escape(l) + "</b>";
    if (agents.about.count(l)) out += " (" + html_escape(agents.about.at(l)) + ")";
  }
  if (agents.labels.empty()) out += " none";
  out += "</p>";
  auto unconfined = std::count_if(trials.begin(), trials.end(), [](const TrialRecord& t) { return t.unconfined; });
  if (unconfined > 0)
    out += "<p><strong>unconfined (host executor)</strong>: " + std::to_string(unconfined) + " of " +
           std::to_string(trials.size()) + " trials ran their tools on this host, in no container.</p>";
  return out + runtimes_line(trials);
}

std::string row(const std::string& name, const std::string& value) {
  return "<tr>" + th(name) + td(value, true) + "</tr>";
}

// One agent: everything in one table, as before (the "overall" numbers are that agent's).
std::string single_agent_table(const Value* s) {
  const Value* tokens = json::get_object(*s, "tokens");
  const Value* lat = json::get_object(*s, "latency_s");
  const Value* wall = json::get_object(*s, "wall_s");
  std::string out = "<h2>Overall</h2><table>";
  out += row("pass rate",
             percent(opt_num(s, "pass_rate")) + " (" + count(s, "passed") + "/" + count(s, "graded") + " graded)");
  out += row("pass@1 [95% CI]", pass1_with_ci(s));
  out += row("mean score [95% CI]", score_with_ci(s));
  out += row("trials", count(s, "trials"));
  out += row("infra errors (not in any rate)", count(s, "infra_errors"));
  out += row("cost", cost_of(s));
  out += row("cost per passed trial", cost_per_pass(s));
  out += row("tokens in / out", count(tokens, "input") + " / " + count(tokens, "output"));
  out += row("tool calls / errors", count(s, "tool_calls") + " / " + count(s, "tool_errors"));
  if (wall)
    out += row(
        "wall time per trial p50 / p90 / max",
        seconds(opt_num(wall, "p50")) + " / " + seconds(opt_num(wall, "p90")) + " / " + seconds(opt_num(wall, "max")));
  if (lat)
    out += row("agent phase p50 / p90 / max", seconds(opt_num(lat, "p50")) + " / " + seconds(opt_num(lat, "p90")) +
                                                  " / " + seconds(opt_num(lat, "max")));
  return out + "</table>";
}

std::string agent_tables(const Value* by_agent, const Agents& agents) {
  std::string out =
      "<h2>Per agent</h2><p class=\"muted\">Each agent over its own trials; infra errors are outside every rate. "
      "Intervals: 95% bootstrap over trials within each task (the task set taken as fixed).</p>"
      "<table><tr>" +
      th("agent") + th("trials", true) + th("graded", true) + th("passed", true) + th("pass rate", true) +
      th("pass@1 [95% CI]", true) + th("mean score [95% CI]", true) + th("infra errors", true) + "</tr>";
  for (const auto& l : agents.labels) {
    const Value* s = json::get_object(*by_agent, l.c_str());
    out += "<tr>" + label_td(l) + td(count(s, "trials"), true) + td(count(s, "graded"), true) +
           td(count(s, "passed"), true) + td(percent(opt_num(s, "pass_rate")), true) + td(pass1_with_ci(s), true) +
           td(score_with_ci(s), true) + td(count(s, "infra_errors"), true) + "</tr>";
  }
  out += "</table><h3>Spending and time</h3><table><tr>" + th("agent") + th("cost", true) +
         th("cost per passed trial", true) + th("tokens in", true) + th("tokens out", true) + th("tool calls", true) +
         th("tool errors", true) + th("wall time p50 / p90", true) + th("agent phase p50 / p90", true) + "</tr>";
  for (const auto& l : agents.labels) {
    const Value* s = json::get_object(*by_agent, l.c_str());
    const Value* tokens = json::get_object(*s, "tokens");
    const Value* wall = json::get_object(*s, "wall_s");
    const Value* lat = json::get_object(*s, "latency_s");
    out += "<tr>" + label_td(l) + td(cost_of(s), true) + td(cost_per_pass(s), true) + td(count(tokens, "input"), true) +
           td(count(tokens, "output"), true) + td(count(s, "tool_calls"), true) + td(count(s, "tool_errors"), true) +
           td(seconds(opt_num(wall, "p50")) + " / " + seconds(opt_num(wall, "p90")), true) +
           td(seconds(opt_num(lat, "p50")) + " / " + seconds(opt_num(lat, "p90")), true) + "</tr>";
  }
  return out + "</table>";
}

std::string signed_points(double v) {
  std::string p = fmt_num("%.0f", v * 100);
  return (v > 0 && p != "0" ? "+" : "") + p;
}

std::string comparisons_section(const Value* cs) {
  if (!cs || !cs->IsArray() || cs->Size() == 0) return "";
  std::string out =
      "<h2>Comparisons</h2><p class=\"muted\">Paired on the tasks both agents ran (b − a): each of 2000 bootstrap "
      "resamples draws the common tasks with replacement, then each agent's trials within every drawn task; the "
      "interval is its 2.5–97.5 percentiles (docs&#47;metrics.md). A task is won on its pass rate, then its mean "
      "score.</p>";
  std::string table = "<table><tr>" + th("a") + th("b") + th("tasks", true) + th("pass rate a → b", true) +
                      th("b − a (points) [95% CI]", true) + th("mean score b − a [95% CI]", true) +
                      th("wins b / a / ties", true) + "</tr>";
  for (const auto& c : cs->GetArray()) {
    std::string verdict = json::get_string(c, "verdict");
    bool clear = verdict == "a_better" || verdict == "b_better";
    out += "<p class=\"sentence" + std::string(clear ? "" : " none") + "\">" +
           html_escape(json::get_string(c, "sentence")) + "</p>";
    const Value* p = json::get_object(c, "pass_rate");
    const Value* s = json::get_object(c, "mean_score");
    const Value* w = json::get_object(c, "wins");
    std::string pr = "n/a", pd = "n/a", sd = "n/a";
    if (p) {
      pr = percent(opt_num(p, "a")) + " → " + percent(opt_num(p, "b"));
      const Value* ci = json::get_array(*p, "ci95");
      pd = signed_points(opt_num(p, "diff").value_or(0));
      if (ci && ci->Size() == 2)
        pd += " [" + signed_points((*ci)[0].GetDouble()) + ", " + signed_points((*ci)[1].GetDouble()) + "]";
    }
    if (s) {
      const Value* ci = json::get_array(*s, "ci95");
      sd = fmt_num("%+.3f", opt_num(s, "diff").value_or(0));
      if (ci && ci->Size() == 2)
        sd += " [" + fmt_num("%+.3f", (*ci)[0].GetDouble()) + ", " + fmt_num("%+.3f", (*ci)[1].GetDouble()) + "]";
    }
    table += "<tr class=\"cmp\">" + label_td(json::get_string(c, "a")) + label_td(json::get_string(c, "b")) +
             td(count(&c, "tasks"), true) + td(pr, true) + td(pd, true) + td(sd, true) +
             td(count(w, "b") + " / " + count(w, "a") + " / " + count(w, "ties"), true) + "</tr>";
  }
  return out + table + "</table>";
}

// A light background from red (0%) through yellow to green (100%): dark text stays readable.
std::string rate_colour(std::optional<double> r) {
  if (!r) return "#eeeeee";
  return "hsl(" + fmt_num("%.0f", std::clamp(*r, 0.0, 1.0) * 120) + ",65%,85%)";
}

std::string matrix_section(const Value* by_task, const Agents& agents, const std::map<std::string, int>& anchors) {
  if (!by_task || !by_task->IsObject() || by_task->MemberCount() == 0)
    return "<h2>Tasks</h2><p class=\"muted\">no trials</p>";
  std::string out =
      "<h2>Task × agent</h2><p class=\"muted\">passed / graded, pass rate and mean score per cell; "
      "infra errors apart. The task links to its trials.</p><table><tr>" +
      th("task");
  for (const auto& l : agents.labels) out += "<th class=\"label\">" + html_escape(l) + "</th>";
  out += "</tr>";
  for (const auto& task : by_task->GetObject()) {
    std::string id(task.name.GetString(), task.name.GetStringLength());
    out += "<tr><td class=\"label\"><a href=\"#task-" + std::to_string(anchors.at(id)) + "\">" + html_escape(id) +
           "</a></td>";
    for (const auto& l : agents.labels) {
      const Value* s = task.value.IsObject() ? json::get_object(task.value, l.c_str()) : nullptr;
      if (!s) {
        out += "<td class=\"cell muted\">not run</td>";
        continue;
      }
      auto rate = opt_num(s, "pass_rate");
      std::string text = count(s, "passed") + "&#47;" + count(s, "graded") + " · " + percent(rate);
      if (auto m = opt_num(s, "mean_score")) text += " · " + fmt_num("%.2f", *m);
      if (icount(s, "infra_errors")) text += "<br><span class=\"infra\">" + count(s, "infra_errors") + " infra</span>";
      out += "<td class=\"cell\" style=\"background:" + rate_colour(rate) + "\">" + text +
             "<div class=\"bar\"><span style=\"width:" + fmt_num("%.0f", rate.value_or(0) * 100) +
             "%\"></span></div></td>";
    }
    out += "</tr>";
  }
  return out + "</table>";
}

// pass@k (solid) and pass^k (dashed) against k, one colour per agent.
std::string pass_k_curves(const Value* by_agent, const Agents& agents) {
  int max_k = 0;
  for (const auto& l : agents.labels)
    if (const Value* at = json::get_object(*json::get_object(*by_agent, l.c_str()), "pass_at_k"))
      max_k = std::max(max_k, static_cast<int>(at->MemberCount()));
  if (max_k == 0) return "";
  constexpr int kLeft = 48, kTop = 10, kW = 460, kH = 200;
  auto x_of = [&](int k) { return kLeft + (max_k == 1 ? kW / 2.0 : (k - 1) * kW / static_cast<double>(max_k - 1)); };
  auto y_of = [&](double v) { return kTop + (1 - std::clamp(v, 0.0, 1.0)) * kH; };
  std::string w = std::to_string(kLeft + kW + 30), h = std::to_string(kTop + kH + 40);
  std::string svg =
      "<svg class=\"chart\" width=\"" + w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " + h + "\" role=\"img\">";
  for (int i = 0; i <= 4; ++i) {
    double y = y_of(i / 4.0);
    svg += "<line x1=\"" + std::to_string(kLeft) + "\" x2=\"" + std::to_string(kLeft + kW) + "\" y1=\"" +
           fmt_num("%.1f", y) + "\" y2=\"" + fmt_num("%.1f", y) + "\" stroke=\"#e0e0e0\"/><text class=\"axis\" x=\"" +
           std::to_string(kLeft - 6) + "\" y=\"" + fmt_num("%.1f", y + 4) + "\" text-anchor=\"end\">" +
           std::to_string(i * 25) + "%</text>";
  }
  for (int k = 1; k <= max_k; ++k)
    svg += "<text class=\"axis\" x=\"" + fmt_num("%.1f", x_of(k)) + "\" y=\"" + std::to_string(kTop + kH + 16) +
           "\" text-anchor=\"middle\">" + std::to_string(k) + "</text>";
  svg += "<text class=\"axis\" x=\"" + std::to_string(kLeft + kW / 2) + "\" y=\"" + std::to_string(kTop + kH + 34) +
         "\" text-anchor=\"middle\">k (trials drawn)</text>";
  for (const auto& l : agents.labels) {
    const Value* s = json::get_object(*by_agent, l.c_str());
    for (const char* key : {"pass_at_k", "pass_hat_k"}) {
      const Value* m = json::get_object(*s, key);
      if (!m) continue;
      std::string pts;
      for (const auto& e : m->GetObject()) {
        int k = std::atoi(e.name.GetString());
        if (!e.value.IsNumber()) continue;
        pts += fmt_num("%.1f", x_of(k)) + "," + fmt_num("%.1f", y_of(e.value.GetDouble())) + " ";
        svg += "<circle cx=\"" + fmt_num("%.1f", x_of(k)) + "\" cy=\"" + fmt_num("%.1f", y_of(e.value.GetDouble())) +
               "\" r=\"3\" fill=\"" + agents.colour(l) + "\"><title>" + html_escape(l) + " " +
               (std::string(key) == "pass_at_k" ? "pass@" : "pass^") + e.name.GetString() + " = " +
               percent(e.value.GetDouble()) + "</title></circle>";
      }
      svg += "<polyline fill=\"none\" stroke=\"" + agents.colour(l) + "\" stroke-width=\"2\"" +
             (std::string(key) == "pass_hat_k" ? " stroke-dasharray=\"6 4\"" : "") + " points=\"" + pts + "\"/>";
    }
  }
  svg += "</svg>";
  std::string legend = "<p>";
  for (const auto& l : agents.labels)
    legend += "<span class=\"line-key\" style=\"border-color:" + agents.colour(l) + "\"></span>" + html_escape(l);
  legend +=
      "<br><span class=\"line-key\" style=\"border-color:#333\"></span>pass@k: at least one of k trials passes"
      "<span class=\"line-key dash\" style=\"border-color:#333\"></span>pass^k: all k pass</p>";
  std::string table = "<table><tr>" + th("agent") + th("k", true) + th("pass@k", true) + th("pass^k", true) +
                      th("tasks with ≥ k graded trials", true) + "</tr>";
  for (const auto& l : agents.labels) {
    const Value* s = json::get_object(*by_agent, l.c_str());
    const Value* at = json::get_object(*s, "pass_at_k");
    const Value* hat = json::get_object(*s, "pass_hat_k");
    const Value* tasks = json::get_object(*s, "pass_k_tasks");
    if (!at) continue;
    for (const auto& m : at->GetObject()) {
      const char* k = m.name.GetString();
      table += "<tr>" + label_td(l) + td(html_escape(k), true) + td(percent(opt_num(at, k)), true) +
               td(percent(opt_num(hat, k)), true) + td(count(tasks, k), true) + "</tr>";
    }
  }
  return "<h2>pass@k and pass^k</h2>" + svg + legend + table + "</table>";
}

std::string phases_section(const Value* by_agent, const Agents& agents) {
  double longest = 0;
  for (const auto& l : agents.labels) {
    const Value* ph = json::get_object(*json::get_object(*by_agent, l.c_str()), "phases_s");
    double sum = 0;
    for (const char* p : kPhases) sum += opt_num(ph ? json::get_object(*ph, p) : nullptr, "mean").value_or(0);
    longest = std::max(longest, sum);
  }
  std::string out =
      "<h2>Wall time per trial, by phase</h2><p class=\"muted\">Mean seconds per graded trial; "
      "reserve is the wait for a stack-creation slot.";
  for (std::size_t i = 0; i < std::size(kPhases); ++i)
    out += "<span class=\"key\" style=\"background:" + std::string(kPhaseColours[i]) + "\"></span>" + kPhases[i];
  out += "<br>Cells: mean &#47; p90 seconds.</p><table><tr>" + th("agent") + th("");
  for (const char* p : kPhases) out += th(p, true);
  out += "</tr>";
  for (const auto& l : agents.labels) {
    const Value* ph = json::get_object(*json::get_object(*by_agent, l.c_str()), "phases_s");
    std::string bar = "<div class=\"stack\" style=\"width:260px\">", cells;
    for (std::size_t i = 0; i < std::size(kPhases); ++i) {
      const Value* p = ph ? json::get_object(*ph, kPhases[i]) : nullptr;
      auto mean = opt_num(p, "mean");
      if (mean && longest > 0)
        bar += "<span style=\"width:" + fmt_num("%.1f", *mean / longest * 100) + "%;background:" + kPhaseColours[i] +
               "\" title=\"" + kPhases[i] + " " + fmt_num("%.2f s", *mean) + "\"></span>";
      cells +=
          td(mean ? fmt_num("%.2f", *mean) + " &#47; " + fmt_num("%.2f", opt_num(p, "p90").value_or(0)) : "n/a", true);
    }
    out += "<tr>" + label_td(l) + "<td>" + bar + "</div></td>" + cells + "</tr>";
  }
  return out + "</table>";
}

std::string slices_section(const Value* by_slice, const Agents& agents) {
  if (!by_slice || !by_slice->IsObject() || by_slice->MemberCount() == 0)
    return "<h2>Slices</h2><p class=\"muted\">No task declares a category, tags or a difficulty.</p>";
  std::string out =
      "<h2>Slices</h2><p class=\"muted\">By what tasks declare (category, metadata.tags, "
      "metadata.complexity): passed &#47; graded, pass rate, mean score.</p>";
  for (const auto& dim : by_slice->GetObject()) {
    out += "<h3>" + html_escape(dim.name.GetString()) + "</h3><table><tr>" + th(html_escape(dim.name.GetString()));
    for (const auto& l : agents.labels) out += "<th class=\"label\">" + html_escape(l) + "</th>";
    out += "</tr>";
    for (const auto& v : dim.value.GetObject()) {
      out += "<tr>" + label_td(v.name.GetString());
      for (const auto& l : agents.labels) {
        const Value* s = json::get_object(v.value, l.c_str());
        if (!s) {
          out += "<td class=\"muted\">—</td>";
          continue;
        }
        auto rate = opt_num(s, "pass_rate");
        std::string text = count(s, "passed") + "&#47;" + count(s, "graded") + " · " + percent(rate);
        if (auto m = opt_num(s, "mean_score")) text += " · " + fmt_num("%.2f", *m);
        out += "<td class=\"cell\" style=\"background:" + rate_colour(rate) + "\">" + text + "</td>";
      }
      out += "</tr>";
    }
    out += "</table>";
  }
  return out;
}

std::string outcome_cell(const TrialRecord& t) {
  if (!t.invalid.empty()) return "<span class=\"infra\">invalid record</span>";
  if (!t.graded()) return "<span class=\"infra\">infra error (" + html_escape(to_string(t.infra_kind)) + ")</span>";
  return t.binary_pass ? "<span class=\"pass\">pass</span>" : "<span class=\"fail\">fail</span>";
}

std::string trial_link(const TrialRecord& t, const std::string& text) {
  std::string href = trial_href(t.trial_dir);
  if (href.empty()) return html_escape(text);
  return "<a href=\"" + href + "\">" + html_escape(text) + "</a>";
}

std::string trials_section(const std::vector<TrialRecord>& trials, const std::map<std::string, int>& anchors) {
  std::map<std::string, std::vector<const TrialRecord*>> by_task;
  for (const auto& t : trials) by_task[t.task_id].push_back(&t);
  std::string out =
      "<h2>Trials</h2><p class=\"muted\">Each trial's page holds its whole transcript, the grade with "
      "every check's reason, the state diff and its phase timings.</p>";
  for (auto& [task, list] : by_task) {
    std::stable_sort(list.begin(), list.end(), [](const TrialRecord* a, const TrialRecord* b) {
      return a->agent != b->agent ? a->agent < b->agent : a->trial_index < b->trial_index;
    });
    out += "<h3 id=\"task-" + std::to_string(anchors.at(task)) + "\" class=\"label\" style=\"max-width:none\">" +
           html_escape(task) + "</h3><table><tr>" + th("agent") + th("trial", true) + th("outcome") +
           th("score", true) + th("termination") + th("turns", true) + th("tool calls &#47; errors", true) +
           th("wall time", true) + th("cost", true) + "</tr>";
    for (const auto* t : list) {
      auto wall = wall_seconds(*t);
      out += "<tr>" + label_td(t->agent) + "<td class=\"n\">" + trial_link(*t, "#" + std::to_string(t->trial_index)) +
             "</td>" + td(outcome_cell(*t)) + td(t->graded() ? fmt_num("%.3f", t->score) : "—", true) +
             td(html_escape(t->termination_reason)) + td(std::to_string(t->turns), true) +
             td(std::to_string(t->tool_calls) + " &#47; " + std::to_string(t->tool_errors), true) +
             td(wall ? fmt_num("%.1f s", *wall) : "n/a", true) +
             td(money(t->cost_usd, t->cost_known ? 0 : 1, 1), true) + "</tr>";
    }
    out += "</table>";
  }
  return out;
}

// The validity gate (aggregate.json's "valid"): a banner above everything, so that a degraded
// run's numbers are never read without it.
std::string invalid_banner(const json::Document* agg) {
  if (!agg || json::get_bool(*agg, "valid", true)) return {};
  return "<div class=\"invalid\"><b>INVALID RUN:</b> " + html_escape(json::get_string(*agg, "invalid_reason")) +
         ". Too many trials ended as infra errors: the infrastructure, not the models, decided them. Do not quote "
         "these results; rerun the infra errors (<code>forgectl run --resume</code>).</div>";
}

// Per task and agent: the trials whose egress ledger holds a blocked entry (the agent tried a host
// it may not reach) and those an egress rule failed. Only when some trial recorded a ledger.
std::string egress_section(const Value* by_task, const Agents& agents) {
  if (!by_task || !by_task->IsObject()) return {};
  std::string rows;
  for (const auto& task : by_task->GetObject())
    for (const auto& l : agents.labels) {
      const Value* s = task.value.IsObject() ? json::get_object(task.value, l.c_str()) : nullptr;
      const Value* e = s ? json::get_object(*s, "egress") : nullptr;
      if (!e) continue;
      rows += "<tr>" + td(html_escape(task.name.GetString())) + td(html_escape(l)) +
              td(std::to_string(json::get_int(*e, "trials_with_ledger")), true) +
              td(std::to_string(json::get_int(*e, "tried_blocked")), true) +
              td(std::to_string(json::get_int(*e, "failed_rules")), true) + "</tr>";
    }
  if (rows.empty()) return {};
  return "<h2>Egress</h2><p class=\"muted\">Trials whose egress ledger holds a refused DNS query or a denied "
         "request outside setup and grade (the agent tried a host it may not reach), and trials an egress rule "
         "failed.</p><table><tr>" +
         th("task") + th("agent") + th("with ledger", true) + th("tried a blocked host", true) +
         th("failed an egress rule", true) + "</tr>" + rows + "</table>";
}

std::string reasons_section(const Value* by_agent, const Agents& agents) {
  std::set<std::string> reasons;
  for (const auto& l : agents.labels)
    if (const Value* r = json::get_object(*json::get_object(*by_agent, l.c_str()), "termination_reasons"))
      for (const auto& m : r->GetObject()) reasons.insert(m.name.GetString());
  std::string out = "<h2>Termination reasons</h2>";
  if (reasons.empty()) return out + "<p class=\"muted\">none</p>";
  out += "<table><tr>" + th("reason");
  for (const auto& l : agents.labels) out += "<th class=\"label\">" + html_escape(l) + "</th>";
  out += "</tr>";
  for (const auto& r : reasons) {
    out += "<tr>" + td(html_escape(r));
    for (const auto& l : agents.labels) {
      const Value* m = json::get_object(*json::get_object(*by_agent, l.c_str()), "termination_reasons");
      out += td(std::to_string(m ? json::get_int(*m, r.c_str()) : 0), true);
    }
    out += "</tr>";
  }
  return out + "</table>";
}

std::string errors_section(const std::vector<TrialRecord>& trials, const json::Document* run) {
  std::string out =
      "<h2>Infra and setup errors</h2><p class=\"muted\">Not the model's doing: outside every rate, "
      "score and time above.</p>";
  std::string stopped;
  if (run)
    if (const Value* sum = json::get_object(*run, "summary")) stopped = json::get_string(*sum, "stopped");
  if (!stopped.empty())
    out += "<p><b>The run stopped early:</b> <code>" + html_escape(stopped) +
           "</code><br><span class=\"muted\">A setup error (or a rejected key) stops the run; its trial is not in "
           "trials.jsonl and reruns on --resume after the fix.</span></p>";
  std::vector<const TrialRecord*> infra;
  for (const auto& t : trials)
    if (!t.graded()) infra.push_back(&t);
  if (infra.empty()) return out + "<p class=\"muted\">No infra errors.</p>";
  out += "<table><tr>" + th("task") + th("agent") + th("trial", true) + th("kind") + th("message") + "</tr>";
  // A record whose numbers cannot be counted is listed here too, as what it is.
  for (const auto* t : infra) {
    const bool invalid = !t->invalid.empty();
    const std::string& message = invalid ? t->invalid : t->error;
    out += "<tr>" + label_td(t->task_id) + label_td(t->agent) + "<td class=\"n\">" +
           trial_link(*t, "#" + std::to_string(t->trial_index)) + "</td>" +
           td(invalid ? std::string("invalid record") : html_escape(to_string(t->infra_kind))) + "<td><code>" +
           html_escape(message.empty() ? "(no message)" : message) + "</code></td></tr>";
  }
  return out + "</table>";
}

std::string timeline_section(const std::vector<TrialRecord>& trials) {
  return "<h2>Timeline</h2><p class=\"muted\">One bar per trial, start to finish (each opens the trial); each lane "
         "holds trials that did not overlap.<span class=\"key\" style=\"background:#2e7d32\"></span>pass<span "
         "class=\"key\" style=\"background:#c62828\"></span>fail<span class=\"key\" "
         "style=\"background:#9e9e9e\"></span>infra error</p>" +
         timeline_svg(trials);
}

}  // namespace

std::string render_report_html(const std::vector<TrialRecord>& records, const std::string& aggregate_json_text,
                               const std::string& run_json_text) {
  // The canaries have their own section; every other part shows the agents' trials alone.
  SplitTrials split = split_canaries(records);
  const std::vector<TrialRecord>& trials = split.agents;
  auto agg = json::parse(aggregate_json_text, "aggregate.json");
  auto run = json::parse(run_json_text, "run.json");
  const json::Document* run_doc = run && run->IsObject() ? &*run : nullptr;
  bool ok = agg && agg->IsObject();
  const Value* overall = ok ? json::get_object(*agg, "overall") : nullptr;
  const Value* by_agent = ok ? json::get_object(*agg, "by_agent") : nullptr;
  const Value* by_task = ok ? json::get_object(*agg, "by_task") : nullptr;
  const Value* by_slice = ok ? json::get_object(*agg, "by_slice") : nullptr;
  const Value* comparisons = ok ? json::get_array(*agg, "comparisons") : nullptr;
  Agents agents = agents_of(by_agent, run_doc);
  std::map<std::string, int> anchors;  // task id → its section's id (ids from data never become HTML ids)
  for (const auto& t : trials) anchors.emplace(t.task_id, 0);
  if (by_task && by_task->IsObject())
    for (const auto& m : by_task->GetObject()) anchors.emplace(m.name.GetString(), 0);
  int next = 0;
  for (auto& [task, n] : anchors) n = next++;

  std::string title = run_doc ? json::get_string(*run_doc, "run_id") : "";
  std::string body = invalid_banner(ok ? &*agg : nullptr) + run_header(run_doc, agents, trials);
  CanaryReport canaries = canary_report(split.canaries);
  if (!by_agent || agents.labels.empty()) {
    body += canaries.empty() ? "<p class=\"muted\">No trials recorded.</p>" : "<p class=\"muted\">Only canaries ran.</p>";
  } else {
    if (agents.labels.size() == 1 && overall)
      body += single_agent_table(overall);
    else
      body += agent_tables(by_agent, agents) + comparisons_section(comparisons);
    body += matrix_section(by_task, agents, anchors) + pass_k_curves(by_agent, agents) +
            phases_section(by_agent, agents) + slices_section(by_slice, agents) + reasons_section(by_agent, agents) +
            egress_section(by_task, agents);
  }
  body += canary_section(canaries) + errors_section(trials, run_doc) + timeline_section(trials) +
          trials_section(trials, anchors);
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
         "content=\"width=device-width\"><title>forgectl report " +
         html_escape(title) + "</title><style>" + kStyle + "</style></head><body>" + body +
         "<p class=\"muted\">Written by forgectl report. Infra errors are outside every pass rate, score and time."
         "</p></body></html>\n";
}

}  // namespace forge::results
