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

#include <yaml-cpp/yaml.h>

#include "core/files.h"
#include "core/json.h"
#include "engine/tar.h"
#include "results/trial_detail.h"
#include "tools/redact.h"
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
  r.unconfined = t.unconfined;
  r.golden_source = t.golden.source;
  r.golden_key = t.golden.key;
  r.golden_replays = t.golden.replays;
  r.trial_dir = "trials/" + rel_dir_of(t);
  r.category = t.category;
  r.tags = t.tags;
  r.difficulty = t.difficulty;
  r.expected_failure_modes = t.expected_failure_modes;
  r.cost_known = t.episode.cost_known;
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

}  // namespace

namespace {

// Unique per document within a run: the trial's directory and its attempt ("files-basic/0@1").
std::string atif_trajectory_id(const TrialResult& t) { return rel_dir_of(t) + "@" + std::to_string(t.attempt); }

// The trajectory in Harbor's ATIF (v1.7, the version Harbor writes and validates): one step per
// system, user and assistant message, each assistant step carrying its tool calls and, as its
// observation, the tool results that answered them. v1.7's session_id is run-scoped (every trial
// of a run shares it) and trajectory_id names this document. forgectl keeps token counts per
// episode only, so metrics are in final_metrics alone. No reader needs v1.2: it is not written.
std::string atif_json(const TrialResult& t, const std::string& session_id,
                      const std::function<std::string(std::string_view)>& redact) {
  const auto& ep = t.episode;
  json::Writer w;
  w.begin_object().field("schema_version", kAtifVersion).field("session_id", session_id);
  w.field("trajectory_id", atif_trajectory_id(t));
  w.key("agent")
      .begin_object()
      .field("name", "forgectl")
      .field("version", "1")
      .field("model_name", t.agent)
      .end_object();
  w.key("steps").begin_array();
  int step = 0;
  bool open = false;  // an assistant step whose observation may still receive tool results
  bool in_results = false;
  auto close = [&] {
    if (in_results) w.end_array().end_object();
    if (open) w.end_object();
    open = in_results = false;
  };
  for (const auto& m : ep.messages) {
    if (m.role == ChatMessage::Role::kTool) {
      if (!open) continue;  // a result with no call before it: nothing to attach it to
      if (!in_results) {
        w.key("observation").begin_object().key("results").begin_array();
        in_results = true;
      }
      w.begin_object().field("source_call_id", m.tool_call_id).field("content", redact(m.content));
      // v1.7's ObservationResult.extra: the call was refused, failed or timed out (the model saw
      // "Error: …"), which the content alone does not tell a reader apart from a tool's own text.
      if (m.tool_error) w.key("extra").begin_object().field("tool_error", true).end_object();
      w.end_object();
      continue;
    }
    // A bare stop marker is forgectl's scripted user ending the episode, not a turn of the task.
    if (m.role == ChatMessage::Role::kUser && m.content == "###STOP###") continue;
    close();
    const char* source = m.role == ChatMessage::Role::kAssistant ? "agent"
                         : m.role == ChatMessage::Role::kUser    ? "user"
                                                                 : "system";
    w.begin_object().field("step_id", ++step).field("source", source).field("message", redact(m.content));
    if (!m.reasoning.empty()) w.field("reasoning_content", redact(m.reasoning));
    if (!m.tool_calls.empty()) {
      w.key("tool_calls").begin_array();
      for (const auto& c : m.tool_calls) {
        w.begin_object().field("tool_call_id", c.id).field("function_name", c.name).key("arguments");
        const std::string args = redact(tools::redact_json(c.arguments));
        json::Document d;
        if (!json::parse_document(d, args) && d.IsObject())
          w.raw_value(args);
        else
          w.begin_object().field("raw", args).end_object();
        w.end_object();
      }
      w.end_array();
    }
    open = true;
    if (m.role != ChatMessage::Role::kAssistant) {
      w.end_object();
      open = false;
    }
  }
  close();
  w.end_array();
  w.key("final_metrics")
      .begin_object()
      .field("total_prompt_tokens", static_cast<std::int64_t>(ep.agent_usage.input_tokens))
      .field("total_completion_tokens", static_cast<std::int64_t>(ep.agent_usage.output_tokens));
  w.key("total_cost_usd");
  if (ep.cost_known)
    w.num(ep.agent_cost_usd);
  else
    w.null();
  w.field("total_steps", step).end_object();
  w.key("extra")
      .begin_object()
      .field("task_id", t.task_id)
      .field("trial_index", t.trial_index)
      .field("attempt", t.attempt);
  if (!t.trial_key.empty()) w.field("trial_key", t.trial_key);
  w.end_object();
  w.end_object();
  return w.take();
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
  if (auto st = write_log_tars(dir / "logs", t); !st) return st.fail_with("writing the trial's logs/");

  return {};
}

}  // namespace forge::trial
