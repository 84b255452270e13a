// Text for the report pages.
#include "results/html_text.h"

#include <cstdio>

#include "core/strings.h"

namespace forge::results {

std::string shorten(std::string_view s, std::size_t bytes) {
  if (s.size() <= bytes) return std::string(s);
  std::size_t end = bytes;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;  // not mid-character
  return std::string(s.substr(0, end)) + "…";
}

std::string fmt_num(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string percent(std::optional<double> v) { return v ? fmt_num("%.1f%%", *v * 100) : "n/a"; }

std::string money(double usd, int unpriced, int trials) {
  if (unpriced > 0 && unpriced >= trials && usd == 0) return "cost unknown";
  std::string v = fmt_num("$%.4f", usd);
  if (unpriced == 0) return v;
  return "≥ " + v + " (" + std::to_string(unpriced) + (unpriced == 1 ? " trial" : " trials") + " unpriced)";
}

namespace {

template <typename F>
bool for_each_segment(std::string_view p, F f) {
  std::size_t pos = 0;
  while (pos <= p.size()) {
    std::size_t end = p.find('/', pos);
    if (end == std::string_view::npos) end = p.size();
    if (!f(p.substr(pos, end - pos))) return false;
    pos = end + 1;
  }
  return true;
}

}  // namespace

bool safe_trial_dir(std::string_view d) {
  if (d.substr(0, 7) != "trials/" || d.size() > 4096) return false;
  if (d.find('\\') != std::string_view::npos || d.find('\0') != std::string_view::npos) return false;
  return for_each_segment(d, [](std::string_view s) { return !s.empty() && s != "." && s != ".."; });
}

std::string trial_href(std::string_view d, std::string_view prefix) {
  if (!safe_trial_dir(d)) return "";
  std::string out(prefix);
  bool first = true;
  for_each_segment(d, [&](std::string_view s) {
    out += (first ? "" : "/") + url_encode(s);
    first = false;
    return true;
  });
  return html_escape(out + "/trial.html");
}

int depth_of(std::string_view d) {
  int n = 0;
  for_each_segment(d, [&](std::string_view) {
    ++n;
    return true;
  });
  return n;
}

}  // namespace forge::results
