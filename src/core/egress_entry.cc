// The egress ledger's line format.
#include "core/egress_entry.h"

#include <algorithm>

#include "core/json.h"
#include "core/strings.h"

namespace forge {

namespace {

constexpr std::size_t kMaxFieldBytes = 1024;  // a name or path longer than this is cut
constexpr std::size_t kMaxAnswerBytes = 64;   // an address is at most 45 characters

// What the reader accepts of one line: more than the longest the writer can make (four fields of
// kMaxFieldBytes and the answers, every byte escaped as \u00XX: six times its size), so a line
// egress_line wrote is never dropped as too long; still a bound on what a broken file costs.
constexpr std::size_t kMaxReadLineBytes = 6 * (4 * kMaxFieldBytes + kMaxEgressAnswers * (kMaxAnswerBytes + 3)) + 1024;

std::string field_text(std::string_view s) { return valid_utf8(s.substr(0, kMaxFieldBytes)); }

std::vector<std::string> answers_text(const std::vector<std::string>& answers) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < answers.size() && i < kMaxEgressAnswers; ++i)
    out.push_back(valid_utf8(std::string_view(answers[i]).substr(0, kMaxAnswerBytes)));
  return out;
}

bool read_entry(const json::Value& v, EgressEntry& e) {
  if (!v.IsObject()) return false;
  std::string kind = json::get_string(v, "kind");
  if (kind != "dns" && kind != "http") return false;
  e.kind = kind == "dns" ? EgressKind::kDns : EgressKind::kHttp;
  e.t_ms = json::get_int(v, "t");
  e.phase = json::get_string(v, "phase");
  e.from = json::get_string(v, "from");
  e.host = json::get_string(v, "host");
  e.what = json::get_string(v, "what");
  std::int64_t port = json::get_int(v, "port");
  e.port = port > 0 && port < 65536 ? static_cast<std::uint16_t>(port) : 0;
  e.path = json::get_string(v, "path");
  e.outcome = json::get_string(v, "outcome");
  e.answers = answers_text(json::get_strings(v, "answers"));
  e.status = static_cast<int>(json::get_int(v, "status"));
  e.bytes_out = json::get_int(v, "bytes_out");
  e.bytes_in = json::get_int(v, "bytes_in");
  return !e.host.empty() && !e.outcome.empty();
}

}  // namespace

const char* egress_kind_name(EgressKind k) { return k == EgressKind::kDns ? "dns" : "http"; }

std::string egress_line(const EgressEntry& e) {
  json::Writer w;
  w.begin_object().field("t", e.t_ms).field("phase", e.phase).field("kind", egress_kind_name(e.kind));
  w.field("from", field_text(e.from)).field("host", field_text(e.host)).field("what", field_text(e.what));
  if (e.kind == EgressKind::kHttp) {
    w.field("port", static_cast<std::int64_t>(e.port));
    if (!e.path.empty()) w.field("path", field_text(e.path));
    w.field("status", static_cast<std::int64_t>(e.status));
    w.field("bytes_out", e.bytes_out).field("bytes_in", e.bytes_in);
  }
  w.field("outcome", e.outcome);
  if (e.kind == EgressKind::kDns) w.field("answers", answers_text(e.answers));
  w.end_object();
  return w.take();
}

std::string egress_jsonl(const EgressLedger& l) {
  std::string out;
  for (const auto& e : l.entries) out += egress_line(e) + "\n";
  if (l.dropped > 0) {
    json::Writer w;
    w.begin_object().field("kind", "dropped").field("count", static_cast<std::int64_t>(l.dropped)).end_object();
    out += w.take() + "\n";
  }
  return out;
}

EgressLedger parse_egress_jsonl(std::string_view text) {
  EgressLedger l;
  for (std::string_view line : split_lines(text)) {
    if (trim(line).empty()) continue;
    auto doc = json::parse(line, "an egress.jsonl line", kMaxReadLineBytes);
    if (doc && doc->IsObject() && json::get_string(*doc, "kind") == "dropped") {
      // Saturating: two huge counts must not wrap around to a small one (or to none).
      constexpr std::size_t kMaxCount = std::size_t{1} << 48;
      l.dropped = std::min(kMaxCount, l.dropped + static_cast<std::size_t>(std::clamp<std::int64_t>(
                                                      json::get_int(*doc, "count"), 0, std::int64_t{1} << 48)));
      continue;
    }
    EgressEntry e;
    if (!doc || !read_entry(*doc, e) || l.entries.size() >= kMaxEgressEntries) {
      ++l.dropped;
      continue;
    }
    l.entries.push_back(std::move(e));
  }
  return l;
}

std::string egress_summary_line(const EgressEntry& e) {
  std::string out = (e.phase.empty() ? std::string("-") : e.phase) + " " + egress_kind_name(e.kind) + " ";
  if (e.kind == EgressKind::kDns) {
    out += e.what + " " + e.host + " " + e.outcome;
    if (!e.answers.empty()) out += " " + join(e.answers, ",");
  } else {
    out += e.what + " " + e.host + ":" + std::to_string(e.port) + e.path + " " + e.outcome + " " +
           std::to_string(e.status) + " (" + std::to_string(e.bytes_out) + " B out, " + std::to_string(e.bytes_in) +
           " B in)";
  }
  return out + (e.from.empty() ? "" : " from " + e.from);
}

}  // namespace forge
