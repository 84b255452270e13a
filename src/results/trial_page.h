// trials/<…>/trial.html: one trial's page — the whole transcript, every tool call with its
// arguments and result, the grade with each check's reason, the state diff, phase timings and
// any infra error — self-contained like report.html and linked from it.
#pragma once

#include "core/egress_entry.h"

#include <string>
#include <string_view>

#include "results/trial_detail.h"
#include "results/trial_record.h"

namespace forge::results {

// `detail` is the trial's trial.json, or null when its directory has none (older runs) or it
// could not be read (`unreadable` then says why, on the page): the page then shows what the
// record says. Every string is escaped.
// `egress`: the trial's egress ledger, when it recorded one.
std::string render_trial_page(const TrialRecord& record, const TrialDetail* detail, std::string_view unreadable = {},
                              const EgressLedger* egress = nullptr);

// JSON text indented for reading; text that is not JSON (or nested past json::parse's limit)
// comes back as it is. Iterative: no depth of input reaches the C stack.
std::string pretty_json(const std::string& text);

}  // namespace forge::results
