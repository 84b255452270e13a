// Reads grading.yaml's state_checks block strictly: JSONPath/file assertions and the state hash.
#include <algorithm>

#include "manifest/grading_reader.h"
#include "manifest/state_ops.h"
#include "manifest/yaml_json.h"

namespace forge::manifest {

namespace {

// Tolokaforge's checker reads these (reference §2.6), and every operator's spelling
// (state_ops.h); `op`, `expected`, `required` and `reason` are the spelling some of its packs use,
// which it dropped: the assertion then only checked that the path exists.
std::vector<std::string> assertion_keys() {
  std::vector<std::string> keys = {"path", "path_glob", "description", "op", "expected", "required", "reason"};
  std::string names = state_op_names();
  for (std::size_t start = 0; start < names.size();) {
    std::size_t end = std::min(names.find(", ", start), names.size());
    keys.push_back(names.substr(start, end - start));
    start = end + 2;
  }
  return keys;
}

// The operand `value` of operator `op` (written `key`) into `a`; false after a diagnostic. exists
// and not_exists take a boolean, `false` turning one into the other.
bool set_operand(YamlReader& r, const Field& value, StateOp op, const std::string& key, const std::string& what,
                 StateAssertion& a) {
  if (operand_of(op) == Operand::kNone) {
    auto flag = r.boolean(value, what + "." + key);
    if (!flag) return false;
    a.op = *flag == (op == StateOp::kExists) ? StateOp::kExists : StateOp::kNotExists;
    return true;
  }
  if (operand_of(op) == Operand::kText && !value.node.IsScalar()) {
    r.error(value, what + "." + key + " compares text case-insensitively; give a string");
    return false;
  }
  auto json = yaml_to_json(r, value, what + "." + value.key);
  if (!json) return false;
  if (auto problem = operand_problem(op, *json)) {
    r.error(value, what + "." + key + " " + *problem);
    return false;
  }
  a.expected_json = *json;
  a.op = op;
  return true;
}

// {op: <operator>, expected: <operand>}: read as the operator it names, saying so; false after a
// diagnostic. `op` without `expected` (or the reverse), or an operator forgectl does not have, is
// an error: the author asked for a comparison that would not happen. exists and not_exists need
// no `expected`.
bool read_op_expected(YamlReader& r, const std::optional<Field>& op, const std::optional<Field>& expected,
                      const std::string& what, StateAssertion& a, std::vector<std::string>& ops) {
  const std::string ignored = "Tolokaforge ignored op and expected and only checked that the path exists";
  if (!op) {
    r.error(*expected, what + ": 'expected' needs 'op', the operator (" + state_op_names() + ")",
            ignored + "; remove 'expected' for that", At::kKey);
    return false;
  }
  auto name = r.string(*op, what);
  if (!name) return false;
  auto named = state_op_named(*name);
  if (!named) {
    r.error(*op, what + ".op: '" + *name + "' is not an operator forgectl has (" + state_op_names() + ")",
            ignored + "; remove op and expected for that");
    return false;
  }
  ops.push_back(*name);
  if (!expected && operand_of(*named) == Operand::kNone) {
    a.op = *named;
  } else if (!expected) {
    r.error(*op, what + ": op '" + *name + "' needs 'expected', the value to compare with", {}, At::kKey);
    return false;
  } else if (!set_operand(r, *expected, *named, *name, what, a)) {
    return false;
  }
  r.warning(*op, what + ": op/expected are read as " + *name + ": <expected> (" + ignored + ")",
            "write " + *name + ": <value>");
  return true;
}

std::optional<StateAssertion> read_assertion(YamlReader& r, const Field& item) {
  const std::string what = "state_checks." + item.key;
  StateAssertion a;
  a.where = r.location(item);
  std::vector<std::string> targets, ops;
  std::optional<Field> op, expected;
  std::optional<std::string> reason;
  bool ok = true, has_description = false;
  static const std::vector<std::string> keys = assertion_keys();
  for (const auto& e : r.known_keys(r.mapping(item, what), what, keys)) {
    if (e.key == "path" || e.key == "path_glob") {
      targets.push_back(e.key);
      auto v = r.string(e, what);
      if (v && v->empty()) r.error(e, what + "." + e.key + " is empty");
      if (!v || v->empty()) ok = false;
      else (e.key == "path" ? a.path : a.path_glob) = *v;
    } else if (e.key == "description") {
      has_description = true;
      if (auto v = r.string(e, what)) a.description = *v;
    } else if (e.key == "op") {
      op = e;
    } else if (e.key == "expected") {
      expected = e;
    } else if (e.key == "required") {
      r.warning(e, what + ".required has no effect: every assertion counts (Tolokaforge ignored it too)",
                "remove it");
    } else if (e.key == "reason") {
      reason = r.string(e, what);
      if (reason)
        r.warning(e, what + ".reason is read as the description (Tolokaforge ignored it)", "write description: instead");
    } else {
      ops.push_back(e.key);
      if (!set_operand(r, e, *state_op_named(e.key), e.key, what, a)) ok = false;
    }
  }
  if ((op || expected) && !read_op_expected(r, op, expected, what, a, ops)) ok = false;
  if (reason && !has_description) a.description = *reason;
  if (!item.node.IsMap()) return std::nullopt;
  if (targets.empty()) {
    r.error(item, what + " needs 'path' (a JSONPath over the final state) or 'path_glob' (files)");
    ok = false;
  } else if (targets.size() > 1) {
    r.error(item, what + ": give 'path' or 'path_glob', not both");
    ok = false;
  }
  if (ops.size() > 1) {
    r.error(item, what + ": one operator per assertion, got " + ops[0] + " and " + ops[1],
            "split it into two assertions");
    ok = false;
  }
  if (!ok) return std::nullopt;
  return a;
}

void read_hash(YamlReader& r, const Field& block, HashCheck& h) {
  bool has_golden = false;
  for (const auto& k : r.known_keys(r.mapping_or_null(block, "state_checks.hash"), "state_checks.hash",
                                    {"enabled", "expected_state_hash", "golden_actions", "weight", "description"})) {
    if (k.key == "description") {
      r.warning(k, "state_checks.hash.description has no effect: Tolokaforge ignores it, and so does forgectl",
                "remove it, or describe the task in task.yaml's description");
    } else if (k.key == "enabled") {
      if (auto v = r.boolean(k, "state_checks.hash")) h.enabled = *v;
    } else if (k.key == "expected_state_hash") {
      auto v = r.string(k, "state_checks.hash");
      if (v && v->empty()) r.error(k, "state_checks.hash.expected_state_hash is empty");
      else if (v) h.expected_state_hash = *v;
    } else if (k.key == "weight") {
      auto v = r.number(k, "state_checks.hash");
      if (v && (*v < 0 || *v > 1))
        r.error(k, "state_checks.hash.weight must be between 0 and 1", "it is the hash's share of the state score");
      else if (v) h.weight = *v;
    } else if (!k.is_null()) {
      has_golden = true;
      for (const auto& item : r.sequence(k, "state_checks.hash")) {
        const std::string what = "state_checks.hash." + item.key;
        GoldenAction a;
        a.arguments_json = "{}";
        bool has_name = false;
        for (const auto& e : r.known_keys(r.mapping(item, what), what, {"name", "kwargs"})) {
          if (e.key == "name") {
            has_name = true;
            auto v = r.string(e, what);
            if (v && v->empty()) r.error(e, what + ".name is empty");
            else if (v) a.name = *v;
          } else if (!e.is_null() && !e.node.IsMap()) {
            r.error(e, what + ".kwargs must be a mapping of the tool's arguments");
          } else if (!e.is_null()) {
            if (auto j = yaml_to_json(r, e, what + ".kwargs")) a.arguments_json = *j;
          }
        }
        if (item.node.IsMap() && !has_name) r.error(item, what + " needs the tool's 'name'");
        if (!a.name.empty()) h.golden_actions.push_back(std::move(a));
      }
    }
  }
  if (h.enabled && !has_golden && !h.expected_state_hash)
    r.error(block, "state_checks.hash is enabled but has neither golden_actions nor expected_state_hash", {}, At::kKey);
}

}  // namespace

StateChecks read_state_checks(YamlReader& r, const Field& block) {
  StateChecks s;
  for (const auto& k : r.known_keys(r.mapping_or_null(block, "state_checks"), "state_checks",
                                    {"jsonpaths", "hash", "env_assertions", "db_hash_check", "files"})) {
    if (k.key == "files") {
      // Tolokaforge's model has no such key: its file checks were never run.
      r.warning(k, "state_checks.files has no effect: Tolokaforge ignores it, and so does forgectl",
                "check files with jsonpaths: [{path_glob: /env/fs/agent-visible/<file>, contains: \"…\"}]");
    } else if (k.key == "jsonpaths") {
      if (k.is_null()) continue;
      for (const auto& item : r.sequence(k, "state_checks"))
        if (auto a = read_assertion(r, item)) s.jsonpaths.push_back(std::move(*a));
    } else if (k.key == "hash") {
      read_hash(r, k, s.hash);
    } else if (k.key == "env_assertions") {
      // An empty list asks for nothing; anything else would silently not be checked.
      if (!k.is_null() && !(k.node.IsSequence() && k.node.size() == 0))
        r.error(k, "state_checks.env_assertions is not supported",
                "assert on the final state with jsonpaths ($.db.…), or use a custom_checks test script", At::kKey);
    } else {
      auto v = r.boolean(k, "state_checks");
      if (v && *v)
        r.error(k, "state_checks.db_hash_check is not supported",
                "compare the final state's hash with hash: {enabled: true, golden_actions: […]}");
    }
  }
  s.present = !s.jsonpaths.empty() || s.hash.enabled;
  return s;
}

}  // namespace forge::manifest
