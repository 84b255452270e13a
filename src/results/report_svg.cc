// Inline SVG for report.html: no xmlns (HTML parses inline SVG without it, and the report holds
// no URL of any kind), colours as plain attributes.
#include "results/report_svg.h"

#include <algorithm>
#include <cstdio>

#include "results/html_text.h"

namespace forge::results {

namespace {

constexpr const char* kPassColour = "#2e7d32";
constexpr const char* kFailColour = "#c62828";
constexpr const char* kInfraColour = "#9e9e9e";

std::string fmt(const char* f, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, a);
  return buf;
}

std::string px(double v) { return fmt("%.1f", v); }

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
long days_from_civil(long y, long m, long d) {
  y -= m <= 2;
  long era = (y >= 0 ? y : y - 399) / 400;
  long yoe = y - era * 400;
  long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

struct Span {
  const TrialRecord* trial;
  double start, end;
  int lane = 0;
};

std::vector<Span> timed_spans(const std::vector<TrialRecord>& trials) {
  std::vector<Span> spans;
  for (const auto& t : trials) {
    auto s = parse_iso_utc(t.started_at);
    auto e = parse_iso_utc(t.finished_at);
    if (s && e && *e >= *s) spans.push_back({&t, *s, *e});
  }
  std::stable_sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
  return spans;
}

// Greedy interval packing: each trial takes the first lane free at its start.
int assign_lanes(std::vector<Span>& spans) {
  std::vector<double> lane_end;
  for (auto& s : spans) {
    auto it = std::find_if(lane_end.begin(), lane_end.end(), [&](double e) { return e <= s.start; });
    if (it == lane_end.end())
      it = lane_end.insert(it, s.end);
    else
      *it = s.end;
    s.lane = static_cast<int>(it - lane_end.begin());
  }
  return static_cast<int>(lane_end.size());
}

const char* colour_of(const TrialRecord& t) {
  if (!t.graded()) return kInfraColour;
  return t.binary_pass ? kPassColour : kFailColour;
}

std::string trial_title(const TrialRecord& t, double seconds) {
  std::string state = !t.invalid.empty() ? "invalid record"
                      : !t.graded()      ? "infra error"
                      : t.binary_pass    ? "pass"
                                         : "fail";
  return html_escape(t.task_id + " #" + std::to_string(t.trial_index) + " (" + t.agent + "): " + state + ", " +
                     fmt("%.1f", seconds) + " s");
}

std::string time_axis(double span_s, int left, int width, int y) {
  std::string out;
  for (int i = 0; i <= 4; ++i) {
    double x = left + width * i / 4.0;
    out +=
        "<line x1=\"" + px(x) + "\" y1=\"0\" x2=\"" + px(x) + "\" y2=\"" + std::to_string(y) + "\" stroke=\"#ddd\"/>";
    out += "<text x=\"" + px(x) + "\" y=\"" + std::to_string(y + 14) + "\" text-anchor=\"middle\" class=\"axis\">" +
           fmt("%.0f s", span_s * i / 4.0) + "</text>";
  }
  return out;
}

}  // namespace

std::optional<double> parse_iso_utc(std::string_view s) {
  int y, mo, d, h, mi;
  double sec;
  char z = 0;
  std::string text(s);
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%lf%c", &y, &mo, &d, &h, &mi, &sec, &z) != 7 || z != 'Z')
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec < 0 || sec >= 61) return std::nullopt;
  return static_cast<double>(days_from_civil(y, mo, d)) * 86400.0 + h * 3600.0 + mi * 60.0 + sec;
}

std::string timeline_svg(const std::vector<TrialRecord>& trials) {
  std::vector<Span> spans = timed_spans(trials);
  if (spans.empty()) return "<p class=\"muted\">No trial has readable start and finish times.</p>";
  int lanes = assign_lanes(spans);
  double t0 = spans.front().start, t1 = t0;
  for (const auto& s : spans) t1 = std::max(t1, s.end);
  double span_s = std::max(t1 - t0, 1.0);
  constexpr int kLeft = 24, kWidth = 720, kLane = 12;
  int plot_h = lanes * kLane + 4;
  int height = plot_h + 22;
  std::string out = "<svg class=\"chart\" width=\"" + std::to_string(kLeft * 2 + kWidth) + "\" height=\"" +
                    std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(kLeft * 2 + kWidth) + " " +
                    std::to_string(height) + "\" role=\"img\">" + time_axis(span_s, kLeft, kWidth, plot_h);
  for (const auto& s : spans) {
    double x = kLeft + (s.start - t0) / span_s * kWidth;
    double w = std::max((s.end - s.start) / span_s * kWidth, 2.0);  // a sub-second trial stays visible
    std::string rect = "<rect x=\"" + px(x) + "\" y=\"" + std::to_string(s.lane * kLane + 2) + "\" width=\"" + px(w) +
                       "\" height=\"" + std::to_string(kLane - 3) + "\" fill=\"" + colour_of(*s.trial) + "\"><title>" +
                       trial_title(*s.trial, s.end - s.start) + "</title></rect>";
    std::string href = trial_href(s.trial->trial_dir);
    out += href.empty() ? rect : "<a href=\"" + href + "\">" + rect + "</a>";
  }
  return out + "</svg>";
}

}  // namespace forge::results
