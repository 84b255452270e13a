// Reads a task.yaml's user_simulator, metadata, policies and solution blocks strictly.
#include <filesystem>

#include "manifest/task_reader.h"
#include "manifest/yaml_json.h"

namespace forge::manifest {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kRuleKeys = {"user", "if_assistant_contains", "default", "tool_calls"};

std::optional<std::string> non_empty(YamlReader& r, const Field& f, const std::string& what) {
  auto s = r.string(f, what);
  if (s && s->empty()) {
    r.error(f, subject(what, f.key) + " is empty");
    return std::nullopt;
  }
  return s;
}

// Tolokaforge's scripted simulator matches no rule on {role, content} and never sends it
// (reference §2.4), so such a task never delivered its instruction. The meaning is plain for the
// user's role: a message sent in order, which is what forgectl does, saying so. Another role's
// entry has no effect (only the user's side is scripted).
std::optional<ScriptedRule> read_role_rule(YamlReader& r, const Field& item, const std::vector<Field>& entries,
                                           const std::string& what) {
  std::vector<Field> known = r.known_keys(entries, what, {"role", "content"});
  if (known.size() != entries.size()) return std::nullopt;  // {user: …} keys mixed in: reported
  std::optional<std::string> role, content;
  bool ok = true;
  for (const auto& e : known) {
    auto v = non_empty(r, e, what);
    ok = ok && v.has_value();
    (e.key == "role" ? role : content) = v;
  }
  if (!ok) return std::nullopt;
  if (!role || !content) {
    r.error(item, what + ": a {role, content} entry needs both 'role' and 'content'", "or write {user: \"…\"}");
    return std::nullopt;
  }
  if (*role != "user") {
    r.warning(item, what + ": a {role: " + *role + ", content} entry has no effect: only the user's messages are scripted",
              "remove it; Tolokaforge ignored it too", At::kValue);
    return std::nullopt;
  }
  r.warning(item, what + ": {role: user, content} is sent in order, as {user: …} is (Tolokaforge ignored this shape)",
            "write {user: \"…\"}", At::kValue);
  ScriptedRule rule;
  rule.user = *content;
  return rule;
}

// `[{name, arguments}]`: tool calls written out (the oracle's solution, a scripted user's own).
std::vector<GoldenAction> read_tool_calls(YamlReader& r, const Field& list, const std::string& owner) {
  std::vector<GoldenAction> out;
  for (const auto& item : r.sequence(list, owner)) {
    const std::string what = owner + "." + item.key;
    GoldenAction a;
    a.arguments_json = "{}";
    bool named = false, has_name = false;
    for (const auto& e : r.known_keys(r.mapping(item, what), what, {"name", "arguments"})) {
      if (e.key == "name") {
        has_name = true;
        if (auto v = non_empty(r, e, what)) a.name = *v, named = true;
      } else if (!e.is_null() && !e.node.IsMap()) {
        r.error(e, what + ".arguments must be a mapping of the tool's arguments");
      } else if (!e.is_null()) {
        if (auto j = yaml_to_json(r, e, what + ".arguments")) a.arguments_json = *j;
      }
    }
    if (item.node.IsMap() && !has_name) r.error(item, what + " needs the tool's 'name'");
    if (named) out.push_back(std::move(a));
  }
  return out;
}

std::optional<ScriptedRule> read_rule(YamlReader& r, const Field& item) {
  const std::string what = "user_simulator." + item.key;
  if (!item.node.IsMap()) {
    r.error(item, what + " must be a mapping: {user: …}, {if_assistant_contains: …, user: …} or {default: …}");
    return std::nullopt;
  }
  std::vector<Field> entries = r.mapping(item, what);
  bool role_shape = false;
  for (const auto& e : entries) role_shape = role_shape || e.key == "role" || e.key == "content";
  if (role_shape) return read_role_rule(r, item, entries, what);
  ScriptedRule rule;
  bool has_user = false, has_if = false, has_default = false, ok = true;
  std::vector<Field> known = r.known_keys(entries, what, kRuleKeys);
  if (known.size() != entries.size()) return std::nullopt;
  for (const auto& e : known) {
    if (e.key == "tool_calls") {
      if (!e.is_null()) rule.tool_calls = read_tool_calls(r, e, what);
      continue;
    }
    auto v = non_empty(r, e, what);
    ok = ok && v.has_value();
    if (!v) continue;
    if (e.key == "user") {
      has_user = true;
      rule.user = *v;
    } else if (e.key == "if_assistant_contains") {
      has_if = true;
      rule.if_assistant_contains = *v;
    } else {
      has_default = true;
      rule.is_default = true;
      rule.user = *v;
    }
  }
  if (!ok) return std::nullopt;
  if (has_default && (has_user || has_if)) {
    r.error(item, what + ": 'default' stands alone", "{default: \"…\"} is the reply when no rule matches");
    return std::nullopt;
  }
  if (has_if && !has_user) {
    r.error(item, what + ": 'if_assistant_contains' needs the 'user' reply");
    return std::nullopt;
  }
  if (!has_user && !has_default) {
    r.error(item, what + " is empty");
    return std::nullopt;
  }
  return rule;
}

}  // namespace

UserSimulatorConfig read_user_simulator(YamlReader& r, const Field& block) {
  UserSimulatorConfig u;
  std::optional<Field> flow;
  for (const auto& k : r.known_keys(r.mapping_or_null(block, "user_simulator"), "user_simulator",
                                    {"mode", "persona", "backstory", "scripted_flow"})) {
    if (k.key == "mode") {
      auto m = r.string(k, "user_simulator");
      if (m && *m == "scripted") u.mode = UserSimulatorConfig::Mode::kScripted;
      else if (m && *m == "llm") u.mode = UserSimulatorConfig::Mode::kLlm;
      else if (m) r.error(k, "user_simulator.mode must be 'scripted' or 'llm', got '" + *m + "'");
    } else if (k.key == "persona") {
      if (auto v = r.string(k, "user_simulator")) u.persona = *v;
    } else if (k.key == "backstory") {
      if (auto v = r.string(k, "user_simulator")) u.backstory = *v;
    } else {
      flow = k;
      if (k.is_null()) continue;
      for (const auto& item : r.sequence(k, "user_simulator"))
        if (auto rule = read_rule(r, item)) u.scripted_flow.push_back(std::move(*rule));
    }
  }
  // The LLM simulator never reads the flow; a task that has one almost certainly meant scripted.
  if (flow && u.mode == UserSimulatorConfig::Mode::kLlm && flow->node.IsSequence() && flow->node.size() > 0)
    r.error(*flow, "user_simulator.scripted_flow is used only with mode: scripted", "set user_simulator.mode: scripted",
            At::kKey);
  return u;
}

void read_metadata(YamlReader& r, const Field& block, TaskConfig& task) {
  for (const auto& k : r.known_keys(r.mapping_or_null(block, "metadata"), "metadata",
                                    {"complexity", "expected_failure_modes", "tags"})) {
    if (k.key == "complexity") {
      if (auto v = r.string(k, "metadata")) task.complexity = *v;
    } else if (auto v = r.strings(k, "metadata")) {
      (k.key == "tags" ? task.tags : task.expected_failure_modes) = *v;
    }
  }
}

std::optional<std::string> read_policies(YamlReader& r, const Field& block, TaskConfig& task) {
  std::optional<std::string> prompt;
  for (const auto& k : r.known_keys(r.mapping_or_null(block, "policies"), "policies",
                                    {"agent_system_prompt", "guidance", "disallowed_actions"})) {
    if (k.key == "agent_system_prompt") {
      prompt = r.string(k, "policies");
    } else if (auto v = r.strings(k, "policies")) {
      (k.key == "guidance" ? task.guidance : task.disallowed_actions) = *v;
    }
  }
  return prompt;
}

Solution read_solution(YamlReader& r, const Field& block, const std::string& dir) {
  Solution s;
  s.declared = true;
  const Field* calls = nullptr;
  std::vector<Field> keys = r.known_keys(r.mapping_or_null(block, "solution"), "solution",
                                         {"tool_calls", "script", "final_message"});
  for (const auto& k : keys) {
    if (k.key == "tool_calls") {
      calls = &k;
      if (k.is_null()) continue;
      s.tool_calls = read_tool_calls(r, k, "solution");
    } else if (k.key == "script") {
      auto rel = r.string(k, "solution");
      if (rel && task_path(r, k, "solution.script", dir, *rel, PathKind::kFile, Reach::kGrader))
        s.script = fs::path(*rel).lexically_normal().string();
    } else {
      if (auto v = r.string(k, "solution")) s.final_message = *v;
    }
  }
  if (calls && !s.tool_calls.empty() && !s.script.empty())
    r.error(*calls, "solution: give either 'tool_calls' or 'script', not both",
            "the oracle replays one reference solution", At::kKey);
  return s;
}

}  // namespace forge::manifest
