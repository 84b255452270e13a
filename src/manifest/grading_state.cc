// Reads grading.yaml's state_checks block strictly: JSONPath/file assertions and the state hash.
#include <algorithm>

#include "manifest/grading_reader.h"
#include "manifest/yaml_json.h"

namespace forge::manifest {

namespace {

const std::vector<std::string> kAssertionKeys = {"path",     "path_glob",   "equals",     "equals_ci",
                                                 "contains", "contains_ci", "description"};

std::optional<StateAssertion> read_assertion(YamlReader& r, const Field& item) {
  const std::string what = "state_checks." + item.key;
  StateAssertion a;
  a.where = r.location(item);
  std::vector<std::string> targets, ops;
  bool ok = true;
  for (const auto& e : r.known_keys(r.mapping(item, what), what, kAssertionKeys)) {
    if (e.key == "path" || e.key == "path_glob") {
      targets.push_back(e.key);
      auto v = r.string(e, what);
      if (v && v->empty()) r.error(e, what + "." + e.key + " is empty");
      if (!v || v->empty()) ok = false;
      else (e.key == "path" ? a.path : a.path_glob) = *v;
    } else if (e.key == "description") {
      if (auto v = r.string(e, what)) a.description = *v;
    } else {
      ops.push_back(e.key);
      const bool text_op = e.key.size() > 3 && e.key.substr(e.key.size() - 3) == "_ci";
      if (text_op && !e.node.IsScalar()) {
        r.error(e, what + "." + e.key + " compares text case-insensitively; give a string");
        ok = false;
        continue;
      }
      auto json = yaml_to_json(r, e, what + "." + e.key);
      if (!json) ok = false;
      else a.expected_json = *json;
      a.op = e.key == "equals"      ? StateAssertion::Op::kEquals
             : e.key == "equals_ci" ? StateAssertion::Op::kEqualsCi
             : e.key == "contains"  ? StateAssertion::Op::kContains
                                    : StateAssertion::Op::kContainsCi;
    }
  }
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
                                    {"enabled", "expected_state_hash", "golden_actions", "weight"})) {
    if (k.key == "enabled") {
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
                                    {"jsonpaths", "hash", "env_assertions", "db_hash_check"})) {
    if (k.key == "jsonpaths") {
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
