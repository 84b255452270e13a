// Reads grading.yaml's transcript_rules block strictly.
#include <algorithm>
#include <set>

#include "manifest/grading_parse.h"
#include "manifest/grading_reader.h"
#include "manifest/python_regex.h"
#include "manifest/yaml_json.h"

namespace forge::manifest {

namespace {

const std::vector<std::string> kActionKeys = {"action_id", "requestor", "name", "arguments", "compare_args"};

// Top-level keys of a mapping as written, without reporting anything (the caller's reader
// already reports duplicates when it converts the mapping).
std::vector<std::string> keys_of(const YAML::Node& n) {
  std::vector<std::string> out;
  if (!n.IsMap()) return out;
  for (const auto& kv : n)
    if (kv.first.IsScalar()) out.push_back(kv.first.Scalar());
  return out;
}

// The action as far as it could be read, and whether it was read without problems.
std::pair<RequiredAction, bool> read_action(YamlReader& r, const Field& item) {
  const std::string what = "transcript_rules." + item.key;
  RequiredAction a;
  a.arguments_json = "{}";
  std::vector<std::string> arg_names;
  std::optional<Field> compare;
  bool ok = true, has_name = false;
  for (const auto& e : r.known_keys(r.mapping(item, what), what, kActionKeys)) {
    if (e.key == "action_id") {
      if (auto v = r.string(e, what)) a.action_id = *v;
    } else if (e.key == "requestor") {
      auto v = r.string(e, what);
      if (v && (*v == "assistant" || *v == "user")) a.requestor = *v;
      else if (v) r.error(e, what + ".requestor must be 'assistant' or 'user', got '" + *v + "'"), ok = false;
    } else if (e.key == "name") {
      has_name = true;
      auto v = r.string(e, what);
      if (v && v->empty()) r.error(e, what + ".name is empty");
      if (!v || v->empty()) ok = false;
      else a.name = *v;
    } else if (e.key == "arguments") {
      if (e.is_null()) continue;
      if (!e.node.IsMap()) {
        r.error(e, what + ".arguments must be a mapping of the tool's arguments");
        ok = false;
        continue;
      }
      arg_names = keys_of(e.node);
      auto j = yaml_to_json(r, e, what + ".arguments");
      if (j) a.arguments_json = *j;
      else ok = false;
    } else {
      compare = e;
    }
  }
  if (!item.node.IsMap()) return {a, false};
  if (compare && !compare->is_null()) {
    // null compares every argument; [] the name alone; else the listed keys, which must be
    // among the expected arguments (a misspelt key would compare nothing to nothing).
    if (auto keys = r.strings(*compare, what)) {
      for (const auto& k : *keys)
        if (std::find(arg_names.begin(), arg_names.end(), k) == arg_names.end()) {
          r.error(*compare, what + ".compare_args: '" + k + "' is not one of the action's arguments");
          ok = false;
        }
      a.compare_args = *keys;
    } else {
      ok = false;
    }
  }
  if (!has_name) {
    r.error(item, what + " needs the tool's 'name'");
    ok = false;
  }
  return {a, ok};
}

std::vector<RequiredAction> read_required_actions(YamlReader& r, const Field& f) {
  std::vector<RequiredAction> out;
  std::set<std::string> ids;
  for (const auto& item : r.sequence(f, "transcript_rules")) {
    auto [a, ok] = read_action(r, item);
    if (!a.action_id.empty() && !ids.insert(a.action_id).second)
      r.error(item, "transcript_rules." + item.key + ": action_id '" + a.action_id + "' is used twice");
    else if (ok)
      out.push_back(std::move(a));
  }
  return out;
}

std::vector<CommunicateInfo> read_communicate_info(YamlReader& r, const Field& f) {
  std::vector<CommunicateInfo> out;
  for (const auto& item : r.sequence(f, "transcript_rules")) {
    const std::string what = "transcript_rules." + item.key;
    CommunicateInfo c;
    if (item.node.IsScalar()) {
      if (auto v = r.string(item, "transcript_rules")) c.info = *v;
    } else {
      for (const auto& e : r.known_keys(r.mapping(item, what), what, {"info", "required"})) {
        if (e.key == "info") {
          if (auto v = r.string(e, what)) c.info = *v;
        } else if (auto v = r.boolean(e, what)) {
          c.required = *v;
        }
      }
    }
    if (c.info.empty()) {
      if (item.node.IsScalar() || item.node.IsMap()) r.error(item, what + " needs the 'info' to communicate");
      continue;
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

TranscriptRules read_transcript_rules(YamlReader& r, const Field& block) {
  TranscriptRules t;
  const std::string w = "transcript_rules";
  for (const auto& k : r.known_keys(r.mapping_or_null(block, w), w,
                                    {"must_contain", "disallow_regex", "max_turns", "tool_expectations",
                                     "required_actions", "communicate_info", "must_contain_phrases"})) {
    if (k.key == "must_contain_phrases") {
      // Tolokaforge's model has no such key, and its docs name none: the phrases were never checked.
      r.warning(k, w + ".must_contain_phrases has no effect: Tolokaforge ignores it, and so does forgectl",
                "rename it must_contain to check the phrases", At::kKey);
      continue;
    }
    if (k.is_null()) continue;
    if (k.key == "must_contain") {
      if (auto v = r.strings(k, w)) t.must_contain = *v;
    } else if (k.key == "disallow_regex") {
      for (const auto& item : r.sequence(k, w)) {
        auto p = r.string(item, w);
        if (!p) continue;
        // Compiled as the grader compiles it (IGNORECASE, as Tolokaforge), so what validates runs.
        if (auto re = PythonRegex::compile(*p, Case::kIgnore); !re)
          r.error(item, w + "." + item.key + ": '" + *p + "': " + re.error().message);
        else
          t.disallow_regex.push_back(*p);
      }
    } else if (k.key == "max_turns") {
      auto v = r.integer(k, w);
      if (v && *v <= 0) r.error(k, w + ".max_turns must be positive");
      else if (v) t.max_turns = static_cast<int>(*v);
    } else if (k.key == "tool_expectations") {
      const std::string te = w + ".tool_expectations";
      for (const auto& e : r.known_keys(r.mapping_or_null(k, te), te, {"required_tools", "disallowed_tools"}))
        if (auto v = r.strings(e, te)) (e.key == "required_tools" ? t.required_tools : t.disallowed_tools) = *v;
      for (const auto& name : t.required_tools)
        if (std::find(t.disallowed_tools.begin(), t.disallowed_tools.end(), name) != t.disallowed_tools.end())
          r.error(k, te + ": '" + name + "' is both required and disallowed");
    } else if (k.key == "required_actions") {
      t.required_actions = read_required_actions(r, k);
    } else {
      t.communicate_info = read_communicate_info(r, k);
    }
  }
  t.present = !t.must_contain.empty() || !t.disallow_regex.empty() || t.max_turns || !t.required_tools.empty() ||
              !t.disallowed_tools.empty() || !t.required_actions.empty() || !t.communicate_info.empty();
  return t;
}

}  // namespace forge::manifest
