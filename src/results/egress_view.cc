// Rendering a trial's egress ledger.
#include "results/egress_view.h"

#include <filesystem>
#include <system_error>

#include "core/files.h"
#include "core/strings.h"

namespace forge::results {

namespace fs = std::filesystem;

namespace {

// Each entry is a bounded line, so the file has a bound: every entry at its longest, plus slack.
constexpr std::uintmax_t kMaxEgressFileBytes = (kMaxEgressEntries + 16) * kMaxEgressLineBytes;

std::string counts(const EgressLedger& l) {
  std::size_t blocked = 0;
  for (const auto& e : l.entries) blocked += e.blocked() ? 1 : 0;
  return std::to_string(l.entries.size()) + " entr" + (l.entries.size() == 1 ? "y" : "ies") + " (" +
         std::to_string(blocked) + " blocked), " + std::to_string(l.dropped) + " dropped";
}

}  // namespace

Result<std::optional<EgressLedger>> read_egress_ledger(const std::string& trial_dir) {
  fs::path p = fs::path(trial_dir) / kEgressFile;
  std::error_code ec;
  if (!fs::exists(p, ec)) return std::optional<EgressLedger>{};
  auto text = read_text(p, kMaxEgressFileBytes);
  if (!text) return text.fail_with("reading the trial's egress ledger");
  return std::optional<EgressLedger>(parse_egress_jsonl(*text));
}

std::string egress_text(const EgressLedger& l) {
  std::string out = "egress: " + counts(l) + "\n";
  std::size_t n = 0;
  for (const auto& e : l.entries) {
    if (++n > kMaxEgressShown) {
      out += "  … " + std::to_string(l.entries.size() - kMaxEgressShown) + " more in egress.jsonl\n";
      break;
    }
    out += std::string("  ") + (e.blocked() ? "✗ " : "  ") + egress_summary_line(e) + "\n";
  }
  return out;
}

std::string egress_html(const EgressLedger& l) {
  std::string out = "<h2>Egress</h2><p>" + html_escape(counts(l)) +
                    " — every DNS query the trial's resolver saw and every request through its egress proxy "
                    "(egress.jsonl).</p>";
  if (l.entries.empty()) return out;
  out += "<table><tr><th>phase</th><th>kind</th><th>from</th><th>request</th><th>outcome</th></tr>";
  std::size_t n = 0;
  for (const auto& e : l.entries) {
    if (++n > kMaxEgressShown) break;
    std::string request = e.kind == EgressKind::kDns ? e.what + " " + e.host
                                                     : e.what + " " + e.host + ":" + std::to_string(e.port) + e.path;
    std::string outcome = e.outcome + (e.kind == EgressKind::kHttp ? " " + std::to_string(e.status) : "") +
                          (e.answers.empty() ? "" : " " + join(e.answers, ", "));
    out += std::string("<tr") + (e.blocked() ? " class=\"fail\"" : "") + "><td>" + html_escape(e.phase) + "</td><td>" +
           egress_kind_name(e.kind) + "</td><td>" + html_escape(e.from) + "</td><td><code>" + html_escape(request) +
           "</code></td><td>" + html_escape(outcome) + "</td></tr>";
  }
  out += "</table>";
  if (l.entries.size() > kMaxEgressShown)
    out += "<p class=\"muted\">" + std::to_string(l.entries.size() - kMaxEgressShown) + " more in egress.jsonl.</p>";
  return out;
}

}  // namespace forge::results
