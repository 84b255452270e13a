// Loads grading.yaml: its components, then how they combine into one score.
#include "manifest/grading_parse.h"

#include <algorithm>
#include <filesystem>

#include "manifest/files.h"
#include "manifest/grading_reader.h"

namespace forge::manifest {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kComponents = {"state_checks", "transcript_rules", "llm_judge", "custom_checks"};

struct Combine {
  std::vector<std::pair<std::string, Field>> weights;  // as written, checked once the components are known
  bool weights_given = false;
  bool threshold_given = false;
};

Combine read_combine(YamlReader& r, const Field& block, GradingConfig& g) {
  Combine c;
  for (const auto& k : r.known_keys(r.mapping_or_null(block, "combine"), "combine",
                                    {"method", "weights", "pass_threshold"})) {
    if (k.key == "method") {
      auto m = r.string(k, "combine");
      if (!m) continue;
      // all_pass / any_pass are the runner's names for the same methods (reference §1.6).
      if (*m == "weighted") g.method = CombineMethod::kWeighted;
      else if (*m == "all" || *m == "all_pass") g.method = CombineMethod::kAll;
      else if (*m == "any" || *m == "any_pass") g.method = CombineMethod::kAny;
      else r.error(k, "combine.method must be weighted, all or any, got '" + *m + "'");
    } else if (k.key == "weights") {
      c.weights_given = true;
      for (const auto& wf : r.known_keys(r.mapping_or_null(k, "combine.weights"), "combine.weights", kComponents)) {
        auto v = r.number(wf, "combine.weights");
        if (v && *v < 0) r.error(wf, "combine.weights." + wf.key + " must not be negative");
        else if (v) g.weights[wf.key] = *v, c.weights.emplace_back(wf.key, wf);
      }
    } else {
      auto v = r.number(k, "combine");
      if (v && (*v < 0 || *v > 1)) r.error(k, "combine.pass_threshold must be between 0 and 1");
      else if (v) g.pass_threshold = *v, c.threshold_given = true;
    }
  }
  return c;
}

// Whether a component's block is in the file at all (custom_checks may be there but disabled).
bool given(const std::optional<Field>& f) { return f && !f->is_null(); }

}  // namespace

GradingConfig load_grading(const std::string& path, Diagnostics& diags, const std::string& task_dir) {
  GradingConfig g;
  std::string file = file_kind(path) == FileKind::kDirectory ? join_path(path, "grading.yaml") : path;
  std::error_code ec;
  g.path = fs::absolute(file, ec).lexically_normal().string();
  auto text = read_text(file);
  if (!text) {
    diags.add(Diagnostic{file, 0, 0, text.error().what(), {}});
    return g;
  }
  YamlReader r(file, diags);
  auto root = r.parse(*text);
  if (!root) return g;
  if (root->is_null()) {
    r.error(*root, "grading.yaml is empty", "configure state_checks, transcript_rules, llm_judge or custom_checks");
    return g;
  }
  const std::string dir = task_dir.empty() ? fs::path(g.path).parent_path().string() : task_dir;
  std::optional<Field> combine, blocks[4];
  bool egress_broken = false;
  for (const auto& k :
       r.known_keys(r.mapping(*root, ""), "",
                    {"combine", "state_checks", "transcript_rules", "llm_judge", "custom_checks", "egress"})) {
    if (k.key == "combine") combine = k;
    if (k.key == "egress") {
      const std::size_t before = diags.size();
      g.egress = read_egress(r, k);
      egress_broken = diags.size() > before;
    }
    for (std::size_t i = 0; i < kComponents.size(); ++i)
      if (k.key == kComponents[i]) blocks[i] = k;
  }
  // A block with problems of its own is not also reported as empty or unweighable.
  bool broken[4] = {};
  std::optional<std::pair<double, Field>> custom_weight;
  for (std::size_t i = 0; i < 4; ++i) {
    if (!blocks[i]) continue;
    const std::size_t before = diags.size();
    if (i == 0) g.state_checks = read_state_checks(r, *blocks[i]);
    if (i == 1) g.transcript_rules = read_transcript_rules(r, *blocks[i]);
    if (i == 2) g.llm_judge = read_llm_judge(r, *blocks[i]);
    if (i == 3) g.custom_checks = read_custom_checks(r, *blocks[i], dir, custom_weight);
    broken[i] = diags.size() > before;
  }

  Combine c = combine ? read_combine(r, *combine, g) : Combine{};
  const bool present[4] = {g.state_checks.present, g.transcript_rules.present, g.llm_judge.present,
                           g.custom_checks.present};
  // A weight for a component the file lacks is most likely a mistake (a block forgotten or misnamed).
  // One for a block that has nothing forgectl checks (an empty jsonpaths, a disabled hash, only keys
  // without effect) is what Tolokaforge's combine skips, as it skips every component without a score:
  // accepted, without effect, and said so.
  for (const auto& [name, wf] : c.weights) {
    std::size_t i = std::find(kComponents.begin(), kComponents.end(), name) - kComponents.begin();
    if (broken[i]) continue;
    if (!present[i] && !given(blocks[i])) {
      r.error(wf, "combine.weights." + name + " weighs a component this file does not configure", {}, At::kKey);
    } else if (!present[i] && i != 3) {
      r.warning(wf, "combine.weights." + name + " has no effect: " + name + " has nothing to check",
                "give " + name + " something to check, or remove its weight");
      g.weights.erase(name);
    }
  }
  // Without weights every configured component counts equally.
  if (!c.weights_given)
    for (std::size_t i = 0; i < 4; ++i)
      if (present[i]) g.weights[kComponents[i]] = 1.0;
  if (custom_weight) {
    // Tolokaforge's combine reads combine.weights alone; custom_checks.weight only stands in for a
    // missing combine.weights.custom_checks (forgectl's own addition).
    if (c.weights_given && g.weights.count("custom_checks"))
      r.warning(custom_weight->second, "custom_checks.weight has no effect: combine.weights.custom_checks is used",
                "remove one of the two");
    else
      g.weights["custom_checks"] = custom_weight->first;
  }
  // Tolokaforge's production path (native adapter → runner) passes only at 1.0 when the
  // threshold is absent; its host model's 0.8 never ran.
  if (!c.threshold_given) g.pass_threshold = 1.0;

  const bool any_broken = broken[0] || broken[1] || broken[2] || broken[3] || egress_broken;
  // egress alone grades: a trial passes unless a rule fails (a task that only forbids an upstream).
  if (!present[0] && !present[1] && !present[2] && !present[3] && !g.egress.present && !any_broken) {
    r.error(*root, "grading.yaml grades nothing",
            "configure state_checks, transcript_rules, llm_judge or custom_checks");
  } else if (g.method == CombineMethod::kWeighted && c.weights_given) {
    double total = 0;
    for (const auto& [name, w] : g.weights) total += w;
    if (total <= 0 && combine) r.error(*combine, "combine.weights: no component has a positive weight", {}, At::kKey);
  }
  return g;
}

Result<GradingConfig> load_grading(const std::string& path) {
  std::string file = file_kind(path) == FileKind::kDirectory ? join_path(path, "grading.yaml") : path;
  if (file_kind(file) == FileKind::kMissing) return fail(Errc::kNotFound, "'" + file + "' does not exist");
  Diagnostics diags;
  GradingConfig g = load_grading(path, diags);
  if (diags.has_errors()) return fail(diags.to_error());
  return g;
}

}  // namespace forge::manifest
