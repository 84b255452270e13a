// Reads grading.yaml's `egress` block (forgectl's own; docs/grading.md "egress") strictly.
#include <algorithm>

#include "core/limits.h"
#include "manifest/egress_patterns.h"
#include "manifest/grading_reader.h"

namespace forge::manifest {

namespace {

const std::vector<std::string> kEgressKeys = {"phases", "forbid_hosts", "forbid_any_outside_allowlist", "max_requests",
                                              "forbid_paths"};
// Not "grade": the rules are checked as grading starts, before any grade-phase entry exists.
const std::vector<std::string> kPhases = {"setup", "agent", "between"};

// A list of at most kMaxEgressPatterns items, each read by `one` (which reports its own problems
// and returns nullopt for them); an item given twice is an error.
template <typename One>
std::vector<std::string> read_list(YamlReader& r, const Field& f, const std::string& what, One one) {
  std::vector<std::string> out;
  const auto items = r.sequence(f, "egress");
  if (items.size() > limits::kMaxEgressPatterns) {
    r.error(f, what + " has " + std::to_string(items.size()) + " entries; at most " +
                   std::to_string(limits::kMaxEgressPatterns) + " are allowed");
    return out;
  }
  if (f.node.IsSequence() && items.empty()) r.error(f, what + " is empty", "leave it out, or list something");
  for (const auto& item : items) {
    auto v = r.string(item, "egress");
    if (!v) continue;
    auto got = one(item, *v);
    if (!got) continue;
    if (std::find(out.begin(), out.end(), *got) != out.end())
      r.error(item, what + ": '" + *v + "' is given twice");
    else
      out.push_back(std::move(*got));
  }
  return out;
}

}  // namespace

EgressRules read_egress(YamlReader& r, const Field& block) {
  EgressRules e;
  e.where = r.location(block, At::kKey);
  const std::string w = "egress";
  bool any_rule = false;
  for (const auto& k : r.known_keys(r.mapping_or_null(block, w), w, kEgressKeys)) {
    const std::string what = w + "." + k.key;
    if (k.key == "phases") {
      e.phases = read_list(r, k, what, [&](const Field& item, const std::string& v) -> std::optional<std::string> {
        if (std::find(kPhases.begin(), kPhases.end(), v) != kPhases.end()) return v;
        r.error(item, what + ": '" + v + "' is not a phase the rules can check",
                v == "grade" ? "the rules are checked as grading starts, before the grade phase has any entry"
                             : "give setup, agent or between");
        return std::nullopt;
      });
      continue;
    }
    any_rule = true;
    if (k.key == "forbid_hosts") {
      e.forbid_hosts =
          read_list(r, k, what, [&](const Field& item, const std::string& v) -> std::optional<std::string> {
            auto p = normalise_host_pattern(v);
            if (p) return *p;
            r.error(item, what + ": '" + v + "' " + p.error().message);
            return std::nullopt;
          });
    } else if (k.key == "forbid_paths") {
      e.forbid_paths =
          read_list(r, k, what, [&](const Field& item, const std::string& v) -> std::optional<std::string> {
            if (auto re = compile_path_glob(v); !re) {
              r.error(item, what + ": '" + v + "' " + re.error().message);
              return std::nullopt;
            }
            return v;
          });
    } else if (k.key == "forbid_any_outside_allowlist") {
      if (auto b = r.boolean(k, w)) e.forbid_any_outside_allowlist = *b;
    } else {
      auto n = r.integer(k, w);
      if (n && *n < 0)
        r.error(k, what + " must not be negative");
      else if (n)
        e.max_requests = *n;
    }
  }
  e.present = !e.forbid_hosts.empty() || e.forbid_any_outside_allowlist || e.max_requests.has_value() ||
              !e.forbid_paths.empty();
  // An egress block with no rule would gate nothing, silently: most likely a rule misspelt or left out.
  if (!e.present && !any_rule)
    r.error(block, "egress has no rule",
            "give forbid_hosts, forbid_any_outside_allowlist, max_requests or forbid_paths", At::kKey);
  return e;
}

}  // namespace forge::manifest
