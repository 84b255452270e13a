// Merging run directories: read and check every source first, then write a new directory.
#include "results/merge.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "core/files.h"
#include "core/json.h"
#include "core/scope_guard.h"
#include "core/sha256.h"
#include "results/report_files.h"
#include "results/run_json.h"
#include "results/validity.h"

namespace forge::results {

namespace fs = std::filesystem;

namespace {

struct Source {
  MergeSource info;
  fs::path dir;
  std::vector<TrialRecord> trials;
  std::string status;  // run.json's: running | completed | interrupted | stopped | merged; empty without one
  int planned = -1;    // run.json's summary.planned; -1 without a summary
  std::optional<double> max_infra_rate;          // run.json's: the validity gate's threshold
  std::map<std::string, TaskNetworks> networks;  // run.json's network_policy
};

// The canonical form of a path that may not exist yet, to compare --out with the sources.
fs::path canonical_path(const std::string& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(fs::absolute(p), ec);
  return ec ? fs::absolute(p).lexically_normal() : c;
}

Result<Source> read_source(const std::string& path, std::vector<std::string>& warnings) {
  Source src;
  src.dir = fs::path(path);
  src.info.path = fs::absolute(path).lexically_normal().string();
  std::error_code ec;
  if (!fs::is_directory(src.dir, ec)) return fail(Errc::kNotFound, "run directory '" + path + "' is not a directory");
  std::string jsonl = (src.dir / "trials.jsonl").string();
  fs::path run_path = src.dir / "run.json";
  bool has_run_json = fs::exists(run_path, ec);
  // A run that started but recorded no trial yet has run.json and no trials.jsonl: it is merged
  // as unfinished (check_complete), not refused as a stranger.
  if (has_run_json && !fs::exists(jsonl, ec)) {
    src.info.trials = 0;
  } else {
    auto log = read_trials_jsonl(jsonl);
    if (!log) return log.fail();
    if (log->skipped_last_lines)
      warnings.push_back(jsonl + ": skipped the last line, cut short (a crash mid-write); that trial is not merged");
    src.trials = std::move(log->trials);
    src.info.trials = static_cast<int>(src.trials.size());
  }
  if (!has_run_json) {
    warnings.push_back(path + " has no run.json: its config cannot be checked against the others");
    return src;
  }
  auto run = RunJson::read(run_path.string());
  if (!run) return run.fail();
  src.info.run_id = run->run_id;
  src.info.shard = run->shard;
  src.info.config_hash = run->config_hash;
  src.status = run->status;
  src.planned = run->summary ? run->summary->planned : run->planned;
  src.max_infra_rate = run->max_infra_rate;
  src.networks = run->networks;
  return src;
}

// "i/N" as run.json records a shard; nullopt for anything else (an unsharded run).
std::optional<std::pair<int, int>> parse_shard_text(const std::string& text) {
  auto slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size() || text.size() > 19) return std::nullopt;
  std::string i = text.substr(0, slash), n = text.substr(slash + 1);
  if (i.size() > 9 || n.size() > 9 || i.find_first_not_of("0123456789") != std::string::npos ||
      n.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  int index = std::stoi(i), count = std::stoi(n);
  if (count < 1 || index >= count) return std::nullopt;
  return std::pair{index, count};
}

std::string shard_label(const Source& s) { return s.info.shard.empty() ? "" : " (shard " + s.info.shard + ")"; }

// What makes the merge smaller than the run it stands for: run directories that do not exist,
// runs that did not finish, and shards of the split that no source holds. Each is named; with
// --partial they are warnings and what there is is merged.
Status check_complete(const std::vector<Source>& sources, const std::vector<std::string>& absent,
                      const MergeOptions& options, std::vector<std::string>& warnings) {
  std::vector<std::string> problems;
  for (const auto& a : absent) problems.push_back(a + ": does not exist");
  std::optional<int> count;
  std::set<int> held;
  for (const auto& s : sources) {
    bool finished = s.status.empty() || s.status == "completed" || s.status == "merged";
    if (!finished)
      problems.push_back(s.info.path + shard_label(s) + ": " + s.status + ", " + std::to_string(s.info.trials) +
                         (s.planned >= 0 ? " of " + std::to_string(s.planned) : "") + " trial(s) recorded");
    auto sh = parse_shard_text(s.info.shard);
    if (!sh) continue;
    if (count && *count != sh->second)
      return fail(Errc::kInvalid, "shards of different splits: " + s.info.path + " is shard " + s.info.shard +
                                      ", another source is of " + std::to_string(*count) + " shards");
    count = sh->second;
    held.insert(sh->first);
  }
  for (int i = 0; count && i < *count; ++i)
    if (!held.count(i))
      problems.push_back("shard " + std::to_string(i) + "/" + std::to_string(*count) +
                         ": none of the run directories given holds it");
  if (problems.empty()) return {};
  if (options.partial) {
    for (const auto& p : problems) warnings.push_back(p + " (merged without it: --partial)");
    return {};
  }
  std::string msg = std::to_string(problems.size()) +
                    " run(s) or shard(s) missing or unfinished; the merge would be smaller than the run (finish them "
                    "with forgectl run --resume, or merge what there is with --partial):";
  for (const auto& p : problems) msg += "\n  " + p;
  return fail(absent.empty() ? Errc::kConflict : Errc::kNotFound, msg);
}

// Shards of one run share a config_hash; a source without one cannot be checked, only warned of.
Status check_configs(const std::vector<Source>& sources, const MergeOptions& options,
                     std::vector<std::string>& warnings) {
  const Source* first = nullptr;
  for (const auto& s : sources) {
    if (s.info.config_hash.empty()) continue;
    if (!first) {
      first = &s;
      continue;
    }
    if (s.info.config_hash == first->info.config_hash) continue;
    std::string msg = "shards of different runs: " + (first->dir / "run.json").string() + " config_hash " +
                      first->info.config_hash + ", " + (s.dir / "run.json").string() + " " + s.info.config_hash;
    if (!options.force) return fail(Errc::kInvalid, msg + " (--force merges them anyway)");
    warnings.push_back(msg + " (merged anyway: --force)");
  }
  return {};
}

// Which of two records of one trial to keep: a graded one over an infra error (a rerun that
// worked), else the one that finished later. Ties keep the first.
bool replaces(const TrialRecord& candidate, const TrialRecord& kept) {
  if (candidate.graded() != kept.graded()) return candidate.graded();
  return candidate.finished_at > kept.finished_at;  // ISO 8601 UTC compares as text
}

// A task id fit to be one path component (trial directories are trials/<task>/<idx>/).
bool safe_component(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string::npos && s.find('\0') == std::string::npos;
}

std::string run_json(const std::vector<Source>& sources, const std::vector<TrialRecord>& trials) {
  std::string ids;
  std::set<std::string> agents, hashes;
  RunJson r;
  for (const auto& s : sources) {
    ids += s.info.run_id + "\x1f" + s.info.path + "\n";
    if (!s.info.config_hash.empty()) hashes.insert(s.info.config_hash);
    r.merged_from.push_back({s.info.path, s.info.run_id, s.info.shard, s.info.config_hash, s.info.trials});
  }
  RunSummaryJson sum;
  for (const auto& t : trials) {
    agents.insert(t.agent);
    sum.passed += t.graded() && t.binary_pass;
    sum.graded += t.graded();
    sum.infra_errors += !t.graded();
    sum.cost_usd += t.cost_usd;
  }
  sum.finished = sum.planned = static_cast<int>(trials.size());
  r.run_id = "merged-" + sha256_hex(ids).substr(0, 12);
  r.forgectl_version = "0.1.0";
  r.status = "merged";
  r.merged_at = iso_now();
  r.agents.assign(agents.begin(), agents.end());
  if (hashes.size() == 1) r.config_hash = *hashes.begin();
  // Validity is judged again over the whole, against the strictest threshold a shard ran with: a
  // degraded shard among clean ones may still make the merged run invalid, or not.
  double rate = kDefaultMaxInfraRatePercent;
  bool any_rate = false;
  for (const auto& s : sources)
    if (s.max_infra_rate) rate = any_rate ? std::min(rate, *s.max_infra_rate) : *s.max_infra_rate, any_rate = true;
  r.max_infra_rate = rate;
  for (const auto& s : sources) r.networks.insert(s.networks.begin(), s.networks.end());
  RunValidity v = run_validity(trials, rate);
  sum.valid = v.valid;
  sum.invalid_reason = v.reason;
  r.summary = sum;
  return r.to_json();
}

// Copies each kept trial's directory; a missing one is reported, not fatal (a trial recorded as
// an infra error before its files were written has none).
Status copy_trial_dirs(const std::vector<std::pair<TrialRecord, const Source*>>& kept, const fs::path& out,
                       MergeReport& report) {
  for (const auto& [t, src] : kept) {
    fs::path rel = fs::path("trials") / t.task_id / std::to_string(t.trial_index);
    // The line says where its files are (runs with several agents nest them by agent); only a
    // plain relative path under trials/ is followed, so a line cannot point outside its run.
    fs::path given = fs::path(t.trial_dir).lexically_normal();
    if (!t.trial_dir.empty() && given.is_relative() && *given.begin() == "trials" &&
        given.string().find("..") == std::string::npos)
      rel = given;
    if (!safe_component(t.task_id)) {
      report.warnings.push_back("task id '" + t.task_id + "' is not a directory name: its files are not copied");
      continue;
    }
    std::error_code ec;
    fs::path from = src->dir / rel;
    if (!fs::is_directory(from, ec)) {
      report.missing_dirs.push_back(from.string());
      continue;
    }
    fs::path to = out / rel;
    if (fs::exists(to, ec)) {  // two agents share trials/<task>/<idx>/ in this layout
      report.warnings.push_back(rel.string() + " of agent '" + t.agent + "' (from " + src->info.path +
                                ") clashes with one already copied: not copied");
      continue;
    }
    fs::create_directories(to.parent_path(), ec);
    if (!ec) fs::copy(from, to, fs::copy_options::recursive, ec);
    if (ec) return fail(Errc::kIo, "copying " + from.string() + " to " + to.string() + ": " + ec.message());
  }
  return {};
}

Status check_out_dir(const std::string& out_dir, const std::vector<std::string>& sources) {
  fs::path out = canonical_path(out_dir);
  std::set<fs::path> seen;
  for (const auto& s : sources) {
    fs::path c = canonical_path(s);
    if (c == out)
      return fail(Errc::kInvalid, "--out '" + out_dir + "' is also a source: merge writes a new run directory");
    if (!seen.insert(c).second) return fail(Errc::kInvalid, "run directory '" + s + "' is given twice");
  }
  std::error_code ec;
  if (!fs::exists(out_dir, ec)) return {};
  if (!fs::is_directory(out_dir, ec)) return fail(Errc::kConflict, "--out '" + out_dir + "' exists and is not a directory");
  if (!fs::is_empty(out_dir, ec) || ec)
    return fail(Errc::kConflict, "--out '" + out_dir + "' is not empty: merge writes a new directory, never over results");
  return {};
}

}  // namespace

Result<MergeReport> merge_runs(const std::vector<std::string>& sources, const std::string& out_dir,
                               const MergeOptions& options) {
  if (sources.empty()) return fail(Errc::kInvalid, "no run directories to merge");
  if (auto st = check_out_dir(out_dir, sources); !st) return st.fail();

  MergeReport report;
  std::vector<Source> srcs;
  std::vector<std::string> absent;  // named all together by check_complete
  for (const auto& p : sources) {
    std::error_code ec;
    if (!fs::exists(p, ec)) {
      absent.push_back(fs::absolute(p).lexically_normal().string());
      continue;
    }
    auto s = read_source(p, report.warnings);
    if (!s) return s.fail();  // every error of a source names its path
    srcs.push_back(std::move(*s));
  }
  if (auto st = check_complete(srcs, absent, options, report.warnings); !st) return st.fail();
  if (srcs.empty()) return fail(Errc::kNotFound, "none of the run directories to merge exists");
  if (auto st = check_configs(srcs, options, report.warnings); !st) return st.fail();

  std::map<std::string, std::size_t> index;  // trial identity → position in `kept`
  std::vector<std::pair<TrialRecord, const Source*>> kept;
  for (const auto& s : srcs) {
    report.sources.push_back(s.info);
    for (const auto& t : s.trials) {
      auto [it, inserted] = index.emplace(trial_identity(t), kept.size());
      if (inserted) {
        kept.emplace_back(t, &s);
        continue;
      }
      ++report.duplicates;
      if (replaces(t, kept[it->second].first)) kept[it->second] = {t, &s};
    }
  }
  std::stable_sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first.task_id, a.first.agent, a.first.trial_index) <
           std::tie(b.first.task_id, b.first.agent, b.first.trial_index);
  });

  // Same trial position, different trial_key: the task, an image or the agent changed between
  // the runs. Both are real results, so both are kept, but the user should know.
  for (std::size_t i = 1; i < kept.size(); ++i) {
    const TrialRecord& x = kept[i - 1].first;
    const TrialRecord& y = kept[i].first;
    if (std::tie(x.task_id, x.agent, x.trial_index) == std::tie(y.task_id, y.agent, y.trial_index))
      report.warnings.push_back("trial " + std::to_string(y.trial_index) + " of " + y.task_id + " (" + y.agent +
                                ") has two records with different trial_key (the task, an image or the agent changed), in " +
                                kept[i - 1].second->info.path + " and " + kept[i].second->info.path + ": both kept");
  }

  std::error_code ec;
  fs::path out(out_dir);
  bool existed = fs::exists(out, ec);
  fs::create_directories(out, ec);
  if (ec) return fail(Errc::kIo, "cannot create " + out_dir + ": " + ec.message());
  ScopeGuard cleanup([&] {  // leave --out as it was found: absent or empty
    std::error_code ignored;
    if (!existed) {
      fs::remove_all(out, ignored);
      return;
    }
    for (const auto& e : fs::directory_iterator(out, ignored)) fs::remove_all(e.path(), ignored);
  });

  if (auto st = copy_trial_dirs(kept, out, report); !st) return st.fail_with("merging into " + out_dir);
  std::string lines;
  for (auto& [t, src] : kept) {
    lines += t.raw_line + "\n";
    report.trials.push_back(std::move(t));
  }
  if (auto st = write_file_atomic((out / "trials.jsonl").string(), lines); !st) return st.fail_with("merging into " + out_dir);
  if (auto st = write_file_atomic((out / "run.json").string(), run_json(srcs, report.trials) + "\n"); !st)
    return st.fail_with("merging into " + out_dir);
  if (auto st = write_reports(out.string(), report.trials); !st) return st.fail_with("merging into " + out_dir);
  cleanup.dismiss();
  return report;
}

}  // namespace forge::results
