// env.yaml and logs.yaml: what grading read and what the trial did, each within its caps.
#include "trial/trial_env.h"

#include "core/files.h"
#include "core/json.h"
#include "tools/redact.h"
#include "tools/workspace_path.h"
#include "trial/yaml_text.h"

namespace forge::trial {

namespace {

std::string kib(std::size_t bytes) {
  return bytes >= (1u << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes >> 10) + " KiB";
}

// At most `bytes` of `s`, not ending inside a UTF-8 character.
std::string utf8_prefix(const std::string& s, std::size_t bytes) {
  if (s.size() <= bytes) return s;
  std::size_t end = bytes;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end);
}

// A file's content within what is left of the caps; `note` says what was cut.
grading::WorkspaceFile capped(const grading::WorkspaceFile& f, std::size_t left) {
  grading::WorkspaceFile out{f.path, {}, f.unread};
  if (!f.unread.empty()) return out;  // grading itself did not read it: the reason is grading's
  const std::size_t room = std::min(kEnvFileBytes, left);
  out.content = utf8_prefix(f.content, room);
  if (out.content.size() < f.content.size())
    out.unread = "truncated: the first " + std::to_string(out.content.size()) + " of " +
                 std::to_string(f.content.size()) + " bytes are kept (env.yaml keeps at most " + kib(kEnvFileBytes) +
                 " of a file and " + kib(kEnvFilesBytes) + " in all)";
  return out;
}

// {path: content} and, for the files not kept whole, {path: why} under `notes_key`.
void emit_files(YAML::Emitter& e, const char* key, const char* notes_key,
                const std::map<std::string, grading::WorkspaceFile>& files, const results::Redactor& redact) {
  e << YAML::Key << key << YAML::Value << YAML::BeginMap;
  for (const auto& [path, f] : files)
    if (!path.empty()) {
      e << YAML::Key << redact(path) << YAML::Value;
      emit_text(e, redact(f.content));
    }
  e << YAML::EndMap;
  bool any = false;
  for (const auto& [path, f] : files) any = any || (!path.empty() && !f.unread.empty());
  if (any) {
    e << YAML::Key << notes_key << YAML::Value << YAML::BeginMap;
    for (const auto& [path, f] : files)
      if (!path.empty() && !f.unread.empty()) e << YAML::Key << redact(path) << YAML::Value << redact(f.unread);
    e << YAML::EndMap;
  }
}

// Tolokaforge's split of the state by actor (tau2's dual control): the user's side is its
// `device` and `surroundings`; the agent's is the rest, less `user_db`.
bool users_table(const std::string& name) { return name == "device" || name == "surroundings"; }
bool agents_table(const std::string& name) { return name != "device" && name != "user_db" && name != "surroundings"; }

void emit_tables(YAML::Emitter& e, const char* key, const std::vector<std::pair<std::string, std::string>>& tables,
                 bool (*keep)(const std::string&)) {
  e << YAML::Key << key << YAML::Value << YAML::BeginMap;
  for (const auto& [name, table] : tables)
    if (!keep || keep(name)) {
      e << YAML::Key << name << YAML::Value;
      emit_json_text(e, table);
    }
  e << YAML::EndMap;
}

// The final state's tables, each kept whole while they fit in kEnvStateBytes; the rest named.
// `db` holds them all; `agent` and `user` the same tables split by actor, as Tolokaforge writes.
void emit_state(YAML::Emitter& e, const std::string& final_state_json, const results::Redactor& redact) {
  json::Document d;
  const json::Value* db = !json::parse_document(d, final_state_json) ? json::get_object(d, "db") : nullptr;
  std::size_t used = 0;
  std::vector<std::pair<std::string, std::string>> kept;
  std::vector<std::string> left_out;
  if (db)
    for (const auto& m : db->GetObject()) {
      std::string name(m.name.GetString(), m.name.GetStringLength());
      std::string table = redact(tools::redact_json(json::to_string(m.value)));
      if (used + table.size() > kEnvStateBytes) {
        left_out.push_back(std::move(name));
        continue;
      }
      used += table.size();
      kept.emplace_back(redact(name), std::move(table));
    }
  emit_tables(e, "agent", kept, agents_table);
  emit_tables(e, "user", kept, users_table);
  emit_tables(e, "db", kept, nullptr);
  if (left_out.empty()) return;
  std::string names;
  for (const auto& n : left_out) names += (names.empty() ? "" : ", ") + n;
  e << YAML::Key << "db_truncated" << YAML::Value
    << "tables left out, the state being over the " + kib(kEnvStateBytes) + " env.yaml keeps: " + redact(names);
}

}  // namespace

void keep_graded_files(TrialResult& t, const std::vector<grading::WorkspaceFile>& files) {
  for (const auto& f : files) {
    if (f.path.empty()) {  // a note about the whole listing
      t.graded_files[""] = grading::WorkspaceFile{"", "", f.unread};
      continue;
    }
    if (t.graded_files.count(f.path)) continue;  // read by several checks: listed once
    if (t.graded_files.size() >= kEnvFileCount) {
      t.graded_files[""] = grading::WorkspaceFile{
          "", "", "grading read more than " + std::to_string(kEnvFileCount) + " files; the rest are not listed"};
      return;
    }
    auto kept = capped(f, kEnvFilesBytes - t.graded_bytes);
    t.graded_bytes += kept.content.size();
    t.graded_files[f.path] = std::move(kept);
  }
}

void add_event(TrialResult& t, std::string level, std::string module, std::string message,
               std::map<std::string, std::string> context) {
  if (t.events.size() > kMaxTrialEvents) return;
  if (t.events.size() == kMaxTrialEvents) {
    t.events.push_back({iso_now_ms(),
                        "WARNING",
                        "trial",
                        "more than " + std::to_string(kMaxTrialEvents) + " log entries; the rest were dropped",
                        {}});
    return;
  }
  t.events.push_back({iso_now_ms(), std::move(level), std::move(module), std::move(message), std::move(context)});
}

std::string env_yaml(const TrialResult& t, const results::Redactor& redact) {
  YAML::Emitter e;
  e.SetDoublePrecision(kYamlDigits);
  e << YAML::BeginMap;
  emit_state(e, t.final_state_json, redact);
  // The final files: what grading's path_glob checks read after the agent finished.
  emit_files(e, "filesystem", "filesystem_truncated", t.graded_files, redact);
  if (auto it = t.graded_files.find(""); it != t.graded_files.end())
    e << YAML::Key << "filesystem_listing" << YAML::Value << redact(it->second.unread);
  std::map<std::string, grading::WorkspaceFile> initial;
  std::size_t used = 0;
  for (const auto& [path, content] : t.initial_files) {
    if (initial.size() >= kEnvFileCount) break;
    auto kept = capped({path, content, {}}, kEnvFilesBytes - used);
    used += kept.content.size();
    initial[path] = std::move(kept);
  }
  emit_files(e, "initial_filesystem", "initial_filesystem_truncated", initial, redact);
  if (!t.mock_web_url.empty()) e << YAML::Key << "mock_web_url" << YAML::Value << redact(t.mock_web_url);
  e << YAML::Key << "agent_visible_dir" << YAML::Value << tools::kLegacyWorkspace << YAML::EndMap;
  return visible_controls(std::string(e.c_str(), e.size()));
}

std::string logs_yaml(const TrialResult& t, const results::Redactor& redact) {
  YAML::Emitter e;
  e << YAML::BeginMap << YAML::Key << "trial_id" << YAML::Value << t.task_id + "_" + std::to_string(t.trial_index)
    << YAML::Key << "attempt" << YAML::Value << t.attempt << YAML::Key << "total_logs" << YAML::Value << t.events.size()
    << YAML::Key << "logs" << YAML::Value << YAML::BeginSeq;
  for (const auto& ev : t.events) {
    e << YAML::BeginMap << YAML::Key << "timestamp" << YAML::Value << ev.timestamp << YAML::Key << "level"
      << YAML::Value << ev.level << YAML::Key << "module" << YAML::Value << ev.module << YAML::Key << "message"
      << YAML::Value << redact(ev.message) << YAML::Key << "context" << YAML::Value << YAML::BeginMap;
    for (const auto& [k, v] : ev.context) e << YAML::Key << k << YAML::Value << redact(v);
    e << YAML::EndMap << YAML::EndMap;
  }
  e << YAML::EndSeq << YAML::EndMap;
  return visible_controls(std::string(e.c_str(), e.size()));
}

}  // namespace forge::trial
