// Text for the report pages and `forgectl show`: escaping untrusted strings, numbers, money, and
// the relative links from report.html to each trial's page.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/strings.h"

namespace forge::results {

using forge::html_escape;  // core/strings.h: one escaping for the report pages and mock-web's

// At most `bytes` bytes of `s`, cut on a UTF-8 boundary, with "…" when shortened.
std::string shorten(std::string_view s, std::size_t bytes);

std::string fmt_num(const char* printf_format, double v);
std::string percent(std::optional<double> rate);  // "75.0%" | "n/a"
// "$0.0123"; "cost unknown" when every trial lacked a price; "≥ $0.0123 (2 trials unpriced)" when some did.
std::string money(double usd, int unpriced_trials, int trials);

// A record's trial_dir is used as a path under the run directory only when it is
// "trials/<segment>/…" with no empty, "." or ".." segment and no backslash or NUL: a line of
// trials.jsonl can never point a page outside trials/.
bool safe_trial_dir(std::string_view trial_dir);
// The relative link to a trial's page (`prefix` + each segment percent-encoded + "/trial.html"),
// already escaped for an attribute. Empty when the trial_dir is not safe.
std::string trial_href(std::string_view trial_dir, std::string_view prefix = "");
// How many directories below the run directory a trial's page is (trials/a/0 → 3).
int depth_of(std::string_view trial_dir);

}  // namespace forge::results
