// A trial's files in the run directory, and its trials.jsonl record.
#include "trial/trial_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>

#include <yaml-cpp/yaml.h>

#include "core/files.h"
#include "core/json.h"
#include "engine/tar.h"
#include "results/egress_view.h"
#include "results/screenshots.h"
#include "results/trial_detail.h"
#include "tools/redact.h"
#include "trial/trial_atif.h"
#include "trial/trial_env.h"
#include "trial/yaml_text.h"

namespace forge::trial {

namespace fs = std::filesystem;

namespace {

double seconds(Millis m) { return static_cast<double>(m.count()) / 1000.0; }

// trial.json: what the trial's page shows, redacted as the YAML files are.
results::TrialDetail detail_of(const TrialResult& t, const results::Redactor& redact) {
  results::TrialRecord rec = to_record(t);
  results::TrialDetail d;
  d.task_id = t.task_id;
  d.task_name = t.task_name;
  d.category = t.category;
  d.difficulty = t.difficulty;
  d.tags = t.tags;
  d.agent = t.agent;
  d.trial_index = t.trial_index;
  d.attempt = t.attempt;
  d.trial_dir = rec.trial_dir;
  d.outcome = std::string(results::to_string(t.outcome));
  d.infra_kind = std::string(results::to_string(t.infra_kind));
  d.error = redact(t.error);
  d.termination_reason = rec.termination_reason;
  d.started_at = t.started_at;
  d.finished_at = t.finished_at;
  d.docker_host = t.docker_host;
  d.stack = t.stack;
  d.phases_s = rec.phases_s;
  d.turns = rec.turns;
  d.tokens_input = rec.tokens_input;
  d.tokens_output = rec.tokens_output;
  d.cost_usd = rec.cost_usd;
  d.cost_known = rec.cost_known;
  d.agent_s = rec.duration_s;
  for (const auto& m : t.episode.messages) {
    results::DetailMessage dm{role_name(m.role), redact(m.content), redact(m.reasoning), {}, m.tool_call_id, m.name};
    for (const auto& img : m.images) {
      if (img.path.empty())
        ++dm.images_dropped;
      else
        dm.images.push_back(img.path);
    }
    for (const auto& c : m.tool_calls)
      dm.tool_calls.push_back({c.id, c.name, redact(tools::redact_json(c.arguments)),
                               c.provider_id == c.id ? std::string() : c.provider_id, redact(c.refusal)});
    d.messages.push_back(std::move(dm));
  }
  for (const auto& e : t.tool_log) {
    const auto& r = e.record;
    bool ok = r.outcome == tools::ToolOutcome::Kind::kOk;
    d.tool_log.push_back({e.requestor, r.tool, redact(r.arguments), tools::outcome_name(r.outcome), redact(r.content),
                          ok ? std::string() : redact(r.reason), seconds(r.elapsed), r.truncated});
  }
  d.screenshots = t.screenshots;
  d.screenshots_dropped = t.screenshots_dropped;
  d.binary_pass = rec.binary_pass;
  d.score = rec.score;
  d.components = t.grade.components;
  for (const auto& r : t.grade.reasons) d.reasons.push_back(redact(r));
  d.state_diff_json = redact(t.grade.state_diff_json);
  return d;
}

}  // namespace

results::TrialRecord to_record(const TrialResult& t) {
  results::TrialRecord r;
  r.task_id = t.task_id;
  r.trial_index = t.trial_index;
  r.attempt = t.attempt;
  r.agent = t.agent;
  r.trial_key = t.trial_key;
  r.outcome = t.outcome;
  r.infra_kind = t.infra_kind;
  r.binary_pass = t.outcome == results::Outcome::kGraded && t.grade.binary_pass;
  r.score = t.outcome == results::Outcome::kGraded ? t.grade.score : 0.0;
  r.components = t.grade.components;
  r.termination_reason = std::string(agent::termination_name(t.episode.termination));
  r.error = t.error;
  for (const auto& e : t.tool_log) r.tool_errors += e.record.outcome != tools::ToolOutcome::Kind::kOk;
  r.tool_calls = static_cast<std::int64_t>(t.tool_log.size());
  r.cost_usd = t.episode.agent_cost_usd + t.episode.user_cost_usd + t.judge_cost_usd;
  r.tokens_input = t.episode.agent_usage.input_tokens + t.episode.user_usage.input_tokens;
  r.tokens_output = t.episode.agent_usage.output_tokens + t.episode.user_usage.output_tokens;
  r.turns = t.episode.turns;
  r.duration_s = seconds(t.episode.elapsed);
  for (const auto& [k, v] : t.phases) r.phases_s[k] = seconds(v);
  r.started_at = t.started_at;
  r.finished_at = t.finished_at;
  r.docker_host = t.docker_host;
  r.runtime = t.runtime;
  r.networks = t.networks;
  r.unconfined = t.unconfined;
  r.golden_source = t.golden.source;
  r.golden_key = t.golden.key;
  r.golden_replays = t.golden.replays;
  r.snapshot_source = t.snapshot_source;
  r.snapshot_image = t.snapshot_image;
  r.workspace_sha256 = t.workspace_sha256;
  r.trial_dir = "trials/" + rel_dir_of(t);
  r.category = t.category;
  r.tags = t.tags;
  r.difficulty = t.difficulty;
  r.expected_failure_modes = t.expected_failure_modes;
  r.cost_known = t.episode.cost_known;
  r.screenshots = t.screenshots;
  r.screenshots_dropped = t.screenshots_dropped;
  if (t.egress) {
    r.egress_recorded = true;
    r.egress_entries = static_cast<std::int64_t>(t.egress->entries.size());
    r.egress_dropped = static_cast<std::int64_t>(t.egress->dropped);
    for (const auto& e : t.egress->entries) r.egress_blocked += e.blocked() && e.phase != "setup" && e.phase != "grade";
  }
  return r;
}

std::string rel_dir_of(const TrialResult& t) {
  return t.rel_dir.empty() ? t.task_id + "/" + std::to_string(t.trial_index) : t.rel_dir;
}

namespace {

// A Harbor task's collected /logs trees under the trial's logs/: plain files only, every path
// relative and free of "..", at most kMaxLogFiles of them.
Status write_log_tars(const fs::path& logs, const TrialResult& t) {
  constexpr std::size_t kMaxLogFiles = 10000;
  std::size_t files = 0;
  if (!t.verifier_output.empty() || t.verifier_exit_code >= 0) {
    std::error_code ec;
    fs::create_directories(logs / "verifier", ec);
    if (ec) return fail(Errc::kIo, (logs / "verifier").string() + ": " + ec.message());
    if (auto st = write_file_atomic((logs / "verifier" / "forgectl-output.txt").string(),
                                    "exit code " + std::to_string(t.verifier_exit_code) + "\n" + t.verifier_output);
        !st)
      return st;
  }
  for (const auto& bytes : t.log_tars) {
    auto entries = engine::read_tar(bytes);
    if (!entries) return entries.fail();
    for (const auto& e : *entries) {
      if (e.type != engine::EntryType::kFile) continue;
      const fs::path rel = fs::path(e.path).lexically_normal();
      if (rel.empty() || rel.is_absolute() || *rel.begin() == "..") continue;
      if (++files > kMaxLogFiles) return {};
      std::error_code ec;
      fs::create_directories((logs / rel).parent_path(), ec);
      if (ec) return fail(Errc::kIo, (logs / rel).parent_path().string() + ": " + ec.message());
      if (auto st = write_file_atomic((logs / rel).string(), e.content); !st) return st;
    }
  }
  return {};
}

// A tool message's images in trajectory.yaml: the files the trial's directory keeps, and how many
// more were dropped.
void emit_images(YAML::Emitter& out, const std::vector<ImagePart>& images) {
  std::vector<std::string> kept;
  for (const auto& img : images)
    if (!img.path.empty()) kept.push_back(img.path);
  if (!kept.empty()) out << YAML::Key << "images" << YAML::Value << YAML::Flow << kept;
  if (kept.size() < images.size()) out << YAML::Key << "images_dropped" << YAML::Value << images.size() - kept.size();
}

// The screenshot files this attempt's messages name: the rest under screenshots/ are an earlier
// attempt's, and go.
std::set<std::string> referenced_images(const TrialResult& t) {
  std::set<std::string> out;
  for (const auto& m : t.episode.messages)
    for (const auto& img : m.images)
      if (!img.path.empty()) out.insert(img.path);
  return out;
}

// egress.jsonl, or none: an earlier attempt's must not pass for this one's.
Status write_egress(const fs::path& dir, const TrialResult& t, const results::Redactor& redact) {
  const fs::path path = dir / results::kEgressFile;
  if (!t.egress) {
    std::error_code ec;
    fs::remove(path, ec);
    return {};
  }
  EgressLedger l = *t.egress;
  for (auto& e : l.entries) e.host = redact(e.host), e.path = redact(e.path);
  return write_file_atomic(path.string(), egress_jsonl(l));
}

}  // namespace

Status write_trial_files(const results::RunDir& run, const TrialResult& t, const std::string& task_yaml_summary) {
  auto made = run.trial_dir(rel_dir_of(t));
  if (!made) return made.fail();
  fs::path dir = *made;
  const auto& redact_ = run.redact();
  const auto& ep = t.episode;

  YAML::Emitter traj;

  traj.SetDoublePrecision(kYamlDigits);
  traj << YAML::BeginMap << YAML::Key << "task_id" << YAML::Value << t.task_id << YAML::Key << "trial_index"
       << YAML::Value << t.trial_index << YAML::Key << "attempt" << YAML::Value << t.attempt << YAML::Key << "start_ts"
       << YAML::Value << t.started_at << YAML::Key << "end_ts" << YAML::Value << t.finished_at << YAML::Key << "status"
       << YAML::Value
       << (t.outcome == results::Outcome::kInfraError       ? "error"
           : ep.termination == agent::Termination::kTimeout ? "timeout"
                                                            : "completed")
       << YAML::Key << "termination_reason" << YAML::Value << agent::termination_name(ep.termination);
  if (!t.error.empty()) traj << YAML::Key << "error" << YAML::Value << redact_(t.error);
  if (t.screenshots || t.screenshots_dropped)
    traj << YAML::Key << "screenshots" << YAML::Value << YAML::BeginMap << YAML::Key << "kept" << YAML::Value
         << t.screenshots << YAML::Key << "dropped" << YAML::Value << t.screenshots_dropped << YAML::EndMap;
  traj << YAML::Key << "messages" << YAML::Value << YAML::BeginSeq;
  for (const auto& m : ep.messages) {
    traj << YAML::BeginMap << YAML::Key << "role" << YAML::Value << role_name(m.role) << YAML::Key << "content"
         << YAML::Value;
    emit_text(traj, redact_(m.content));
    if (!m.tool_calls.empty()) {
      traj << YAML::Key << "tool_calls" << YAML::Value << YAML::BeginSeq;
      for (const auto& c : m.tool_calls) {
        traj << YAML::BeginMap << YAML::Key << "id" << YAML::Value << c.id << YAML::Key << "name" << YAML::Value
             << c.name << YAML::Key << "arguments" << YAML::Value;
        emit_json_text(traj, redact_(tools::redact_json(c.arguments)));
        traj << YAML::EndMap;
      }
      traj << YAML::EndSeq;
    }
    if (!m.tool_call_id.empty()) traj << YAML::Key << "tool_call_id" << YAML::Value << m.tool_call_id;
    if (!m.name.empty()) traj << YAML::Key << "name" << YAML::Value << m.name;
    emit_images(traj, m.images);
    traj << YAML::EndMap;
  }
  traj << YAML::EndSeq << YAML::Key << "tool_log" << YAML::Value << YAML::BeginSeq;
  for (const auto& e : t.tool_log) {
    const auto& r = e.record;
    bool ok = r.outcome == tools::ToolOutcome::Kind::kOk;
    traj << YAML::BeginMap << YAML::Key << "tool_name" << YAML::Value << r.tool << YAML::Key << "executor"
         << YAML::Value << e.requestor << YAML::Key << "arguments" << YAML::Value;
    emit_json_text(traj, redact_(r.arguments));
    traj << YAML::Key << "success" << YAML::Value << ok << YAML::Key << "outcome" << YAML::Value
         << tools::outcome_name(r.outcome) << YAML::Key << "output" << YAML::Value;
    emit_text(traj, redact_(r.content));
    traj << YAML::Key << "error" << YAML::Value;
    emit_text(traj, ok ? std::string() : redact_(r.reason));
    traj << YAML::Key << "duration_s" << YAML::Value << seconds(r.elapsed) << YAML::EndMap;
  }
  traj << YAML::EndSeq << YAML::EndMap;

  YAML::Emitter grade;

  grade.SetDoublePrecision(kYamlDigits);
  grade << YAML::BeginMap << YAML::Key << "binary_pass" << YAML::Value
        << (t.outcome == results::Outcome::kGraded && t.grade.binary_pass) << YAML::Key << "score" << YAML::Value
        << (t.outcome == results::Outcome::kGraded ? t.grade.score : 0.0) << YAML::Key << "components" << YAML::Value
        << YAML::BeginMap;
  for (const char* k : {"state_checks", "transcript_rules", "llm_judge", "custom_checks"}) {
    grade << YAML::Key << k << YAML::Value;
    if (auto it = t.grade.components.find(k); it != t.grade.components.end())
      grade << it->second;
    else
      grade << YAML::Null;
  }
  // Every other component too: a Harbor verifier's reward keys ("reward", "reward.<key>").
  for (const auto& [k, v] : t.grade.components)
    if (k != "state_checks" && k != "transcript_rules" && k != "llm_judge" && k != "custom_checks")
      grade << YAML::Key << k << YAML::Value << v;
  grade << YAML::EndMap << YAML::Key << "reasons" << YAML::Value;
  std::string reasons;
  for (const auto& r : t.grade.reasons) reasons += (reasons.empty() ? "" : "\n") + r;
  emit_text(grade, redact_(reasons));
  if (!t.grade.state_diff_json.empty()) {
    grade << YAML::Key << "state_diff" << YAML::Value;
    emit_json_text(grade, t.grade.state_diff_json);
  }
  grade << YAML::EndMap;

  std::map<std::string, std::array<double, 4>> usage;  // calls, ok, errors, seconds
  for (const auto& e : t.tool_log) {
    auto& u = usage[e.record.tool];
    u[0] += 1;
    (e.record.outcome == tools::ToolOutcome::Kind::kOk ? u[1] : u[2]) += 1;
    u[3] += seconds(e.record.elapsed);
  }
  std::size_t ok_calls = 0;
  for (const auto& [k, u] : usage) ok_calls += static_cast<std::size_t>(u[1]);
  YAML::Emitter metrics;
  metrics.SetDoublePrecision(kYamlDigits);
  metrics << YAML::BeginMap << YAML::Key << "latency_total_s" << YAML::Value << seconds(ep.elapsed) << YAML::Key
          << "turns" << YAML::Value << ep.turns << YAML::Key << "api_calls" << YAML::Value << ep.agent_calls
          << YAML::Key << "user_api_calls" << YAML::Value << ep.user_calls << YAML::Key << "tokens_input" << YAML::Value
          << ep.agent_usage.input_tokens << YAML::Key << "tokens_output" << YAML::Value << ep.agent_usage.output_tokens
          << YAML::Key << "user_tokens_input" << YAML::Value << ep.user_usage.input_tokens << YAML::Key
          << "user_tokens_output" << YAML::Value << ep.user_usage.output_tokens << YAML::Key << "cost_usd_est"
          << YAML::Value;
  if (ep.cost_known)
    metrics << ep.agent_cost_usd + ep.user_cost_usd + t.judge_cost_usd;
  else
    metrics << YAML::Null;
  metrics << YAML::Key << "judge_cost_usd" << YAML::Value << t.judge_cost_usd << YAML::Key << "tool_calls"
          << YAML::Value << t.tool_log.size() << YAML::Key << "tool_success_rate" << YAML::Value
          << (t.tool_log.empty() ? 1.0 : static_cast<double>(ok_calls) / static_cast<double>(t.tool_log.size()))
          << YAML::Key << "stuck_detected" << YAML::Value << (ep.termination == agent::Termination::kStuck) << YAML::Key
          << "phases_s" << YAML::Value << YAML::BeginMap;
  for (const auto& [k, v] : t.phases) metrics << YAML::Key << k << YAML::Value << seconds(v);
  metrics << YAML::EndMap << YAML::Key << "tool_usage" << YAML::Value << YAML::BeginSeq;
  for (const auto& [name, u] : usage)
    metrics << YAML::BeginMap << YAML::Key << "tool_name" << YAML::Value << name << YAML::Key << "call_count"
            << YAML::Value << static_cast<int>(u[0]) << YAML::Key << "success_count" << YAML::Value
            << static_cast<int>(u[1]) << YAML::Key << "error_count" << YAML::Value << static_cast<int>(u[2])
            << YAML::Key << "total_duration_s" << YAML::Value << u[3] << YAML::EndMap;
  metrics << YAML::EndSeq << YAML::EndMap;

  for (const auto& [name, text] : std::initializer_list<std::pair<const char*, std::string>>{
           {"trajectory.yaml", visible_controls(std::string(traj.c_str(), traj.size()))},
           {"grade.yaml", visible_controls(std::string(grade.c_str(), grade.size()))},
           {"metrics.yaml", visible_controls(std::string(metrics.c_str(), metrics.size()))},
           {"env.yaml", env_yaml(t, redact_)},
           {"logs.yaml", logs_yaml(t, redact_)},
           {"task.yaml", task_yaml_summary},
           {"trajectory.atif.json", atif_json(t, fs::path(run.dir()).filename().string(), redact_)},
           {"trial.json", detail_of(t, redact_).to_json()}}) {
    if (auto st = write_file_atomic((dir / name).string(), std::string(text) + "\n"); !st) return st;
  }
  if (auto st = write_egress(dir, t, redact_); !st) return st.fail_with("writing the trial's egress.jsonl");
  if (auto st = write_log_tars(dir / "logs", t); !st) return st.fail_with("writing the trial's logs/");
  if (auto st = results::prune_screenshots(dir.string(), referenced_images(t)); !st)
    return st.fail_with("clearing an earlier attempt's screenshots");

  return {};
}

}  // namespace forge::trial
