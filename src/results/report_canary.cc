// The cheat canaries' part of report.html.
#include "results/report_canary.h"

#include <algorithm>
#include <vector>

#include "results/html_text.h"

namespace forge::results {

namespace {

// One strategy's cell: passed (the cheat worked), partial credit, failed, or infra error only.
std::string verdict_cell(const CanaryStrategyResult& s) {
  std::string text, cls;
  if (s.graded == 0) text = "infra error", cls = "infra";
  else if (s.passed > 0) text = "cheated", cls = "fail";
  else if (s.best_score > 0) text = "partial " + fmt_num("%.2f", s.best_score), cls = "muted";
  else text = "no", cls = "pass";
  std::string href = trial_href(s.trial_dir);
  std::string inner = "<span class=\"" + cls + "\">" + html_escape(text) + "</span>";
  if (!href.empty()) inner = "<a href=\"" + href + "\">" + inner + "</a>";
  return "<td class=\"n\">" + inner + "</td>";
}

}  // namespace

std::string canary_section(const CanaryReport& r) {
  if (r.empty()) return "";
  std::vector<std::string> names;  // every strategy any task ran, in name order
  for (const auto& t : r.tasks)
    for (const auto& [n, s] : t.strategies)
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  std::sort(names.begin(), names.end());
  std::string out = "<h2 id=\"canaries\">Cheat canaries</h2>";
  if (r.tasks_cheated > 0)
    out += "<p class=\"sentence\" style=\"border-color:#b71c1c;background:#fdecea\">" + std::to_string(r.tasks_cheated) +
           " of " + std::to_string(r.tasks.size()) +
           " task(s) were passed by a canary: their graders can be gamed without doing the task.</p>";
  out += "<p class=\"muted\">Scripted agents that try to pass without doing the task, through the same tools as any "
         "agent; apart from every agent's numbers above. A canary cheated when its trial passed; partial credit "
         "without a pass is shown, not counted (docs&#47;sweeps.md).</p><table><tr><th>task</th>"
         "<th class=\"n\">cheat rate</th>";
  for (const auto& n : names) out += "<th class=\"n\">" + html_escape("canary:" + n) + "</th>";
  out += "</tr>";
  for (const auto& t : r.tasks) {
    std::string rate = t.graded ? percent(t.cheat_rate()) : "n/a";
    out += "<tr><td class=\"label\">" + html_escape(t.task_id) + "</td><td class=\"n\"><span class=\"" +
           std::string(t.cheated ? "fail" : "pass") + "\">" + rate + "</span></td>";
    for (const auto& n : names) {
      auto it = t.strategies.find(n);
      out += it == t.strategies.end() ? "<td class=\"n muted\">–</td>" : verdict_cell(it->second);
    }
    out += "</tr>";
  }
  return out + "</table>";
}

}  // namespace forge::results
