// One line of trials.jsonl: the record of a finished trial, its one writer and its reader (lenient
// about fields older versions did not write), and the rules for reading the file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "results/outcome.h"

namespace forge::results {

// Lines from older versions lack some fields (trial_key, tool_errors, docker_host, the reserve
// phase): those read as empty / zero / absent.
struct TrialRecord {
  std::string task_id;
  int trial_index = 0;
  int attempt = 1;
  std::string agent;
  std::string trial_key;
  bool binary_pass = false;
  double score = 0;
  std::map<std::string, double> components;
  std::string termination_reason;
  Outcome outcome = Outcome::kGraded;
  InfraKind infra_kind = InfraKind::kNone;  // for infra errors
  std::string error;  // empty when the line has null
  double cost_usd = 0;
  std::int64_t tokens_input = 0;
  std::int64_t tokens_output = 0;
  std::int64_t turns = 0;
  std::int64_t tool_calls = 0;
  std::int64_t tool_errors = 0;
  double duration_s = 0;
  std::map<std::string, double> phases_s;  // only the phases the line has
  std::string started_at, finished_at;     // ISO 8601 UTC
  std::string docker_host;
  // Phase → the network policy it ran under ("setup", "agent", "grade"); empty in older lines.
  std::map<std::string, std::string> networks;
  std::string runtime;    // the runner's OCI runtime ("runc", "runsc"); empty in older lines and local trials
  std::string trial_dir;  // "trials/<task>/<idx>" or "trials/<task>/<agent>/<idx>"; empty in older lines
  // Its tools ran on the local executor, on the host and in no container. Written only when true;
  // a line without it (every container trial, every older line) reads as false.
  bool unconfined = false;
  // The browser screenshots its directory keeps (screenshots/NNN.png) and those dropped past the
  // record's limits (docs/tools.md). Written only when either is set; older lines read as 0.
  std::int64_t screenshots = 0, screenshots_dropped = 0;
  // How its expected state was had (golden replay of a Python tool server): "computed" once for the
  // run by this trial, "reused" from the run, or "replayed" on its own (no cache, or a golden state
  // that is not deterministic); the content key; the golden replays it ran. Written only when set.
  std::string golden_source, golden_key;
  std::int64_t golden_replays = 0;
  // Its starting state when setup was forked (docs/sweeps.md "Forks"): "taken" by the trial whose
  // setup made the snapshot, "forked" by one that started from it; the snapshot image's id and the
  // SHA-256 of the starting workspace (two forks of one snapshot hash alike). Written only when set.
  std::string snapshot_source, snapshot_image, workspace_sha256;
  // Its egress ledger (egress.jsonl) in counts: entries kept, those dropped past the ledger's limit,
  // and the blocked ones (a refused DNS query or a denied request) outside the setup and grade
  // phases, i.e. the agent's tries. Written only when the trial recorded a ledger; a line without
  // it (older ones, full_internet and local trials) reads as egress_recorded false.
  bool egress_recorded = false;
  std::int64_t egress_entries = 0, egress_dropped = 0, egress_blocked = 0;
  // What the task declares (task.yaml's category, metadata.tags and metadata.complexity), for the
  // report's slices; empty when it declares nothing (and in older lines).
  std::string category;
  std::vector<std::string> tags;
  std::string difficulty;
  // task.yaml's metadata.expected_failure_modes, for Tolokaforge's metadata_slices.json; written only
  // when the task declares some (empty in older lines).
  std::vector<std::string> expected_failure_modes;
  // False when some model call of the trial had no known price: cost_usd is then what the priced
  // calls cost, a lower bound, and reports say "cost unknown" rather than a number. Older lines: true.
  bool cost_known = true;
  std::string raw_line;  // the line as read, without its newline: merge copies lines byte for byte
  // Why this line's numbers cannot be counted, set by the reader: a graded score that is not a
  // number in [0, 1] (forgectl never writes one; an older version or a hand edit may have), a
  // cost, duration or count that is negative, not finite or past limits::kMaxRecordAmount. Such
  // a record is outside every rate and sum, and the reports mark it; empty for a usable line.
  std::string invalid;

  // Counted in rates: graded, and its numbers usable.
  bool graded() const { return outcome == Outcome::kGraded && invalid.empty(); }
};

// The JSON object trials.jsonl gets for `r` (no newline). Ungraded trials carry no pass and a
// score of 0 on the line, and are outside every rate.
std::string to_json_line(const TrialRecord& r);

struct TrialLog {
  std::vector<TrialRecord> trials;  // duplicates resolved, in file order of the winning lines
  int skipped_last_lines = 0;       // 1 when the last line was cut short by a crash mid-write
};

// One line; `where` ("DIR/trials.jsonl:7") starts the error message.
Result<TrialRecord> parse_trial_line(std::string_view line, std::string_view where);

// The whole file's text. An unparseable last line is skipped and counted (a crash mid-append
// leaves one); anywhere else it is an error naming `path` and the line number. Blank lines are
// ignored. A later line for the same trial replaces an earlier one (resume re-records redone
// trials).
Result<TrialLog> parse_trials_jsonl(std::string_view text, std::string_view path);

// Reads and parses `path`; a missing file is kNotFound naming it.
Result<TrialLog> read_trials_jsonl(const std::string& path);

// What makes two records the same trial: the trial_key, or without one task_id + agent +
// trial_index.
std::string trial_identity(const TrialRecord& r);

// Keeps the last record of each trial: same trial_key, or without one the same
// task_id + agent + trial_index.
std::vector<TrialRecord> last_record_wins(std::vector<TrialRecord> records);

}  // namespace forge::results
