// Loads a run config: models (run_config_models.cc), orchestrator limits, evaluation inputs.
#include "manifest/run_config_parse.h"

#include <charconv>
#include <cmath>
#include <filesystem>

#include "core/strings.h"
#include "manifest/environment.h"
#include "manifest/files.h"
#include "manifest/run_config_reader.h"
#include "manifest/scalar_parse.h"
#include "manifest/yaml_json.h"

namespace forge::manifest {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kOrchestratorKeys = {"workers",
                                                    "repeats",
                                                    "max_budget_usd",
                                                    "max_requests_per_second",
                                                    "max_attempt_retries",
                                                    "queue_backend",
                                                    "queue_postgres_dsn",
                                                    "timeouts",
                                                    "max_turns",
                                                    "auto_start_services",
                                                    "continue_prompt",
                                                    "stuck_heuristics",
                                                    "runtime",
                                                    "typesense",
                                                    "max_infra_rate"};
const std::vector<std::string> kTypesenseKeys = {"enabled", "mode",           "host",    "port",
                                                 "api_key", "data_dir",       "image",   "container_name",
                                                 "timeout", "cleanup_on_exit"};

// An integer at least `min`, into `out`.
void at_least(YamlReader& r, const Field& f, const std::string& what, std::int64_t min, int& out) {
  auto v = r.integer(f, what);
  if (v && (*v < min || *v > 1'000'000)) r.error(f, what + "." + f.key + (min > 0 ? " must be positive" : " must not be negative"));
  else if (v) out = static_cast<int>(*v);
}

// Seconds as a number (Tolokaforge's form) or a duration string ("90s", "30m").
std::optional<Millis> seconds(YamlReader& r, const Field& f, const std::string& what) {
  auto text = r.string(f, what);
  if (!text) return std::nullopt;
  double s = 0;
  auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), s);
  std::optional<Millis> out;
  if (ec == std::errc() && p == text->data() + text->size() && std::isfinite(s) && s > 0)
    out = Millis(static_cast<std::int64_t>(std::ceil(s * 1000)));
  else if (auto d = parse_duration(*text); d && d->count() > 0)
    out = *d;
  if (!out) r.error(f, what + "." + f.key + " must be a positive number of seconds or a duration like 90s, got '" + *text + "'");
  return out;
}

void read_typesense(YamlReader& r, const Field& f) {
  bool wanted = true;
  for (const auto& k : r.known_keys(r.mapping_or_null(f, "orchestrator.typesense"), "orchestrator.typesense", kTypesenseKeys)) {
    if (k.key == "api_key") refuse_api_key(r, k, "orchestrator.typesense");
    else if (k.key == "enabled") wanted = wanted && r.boolean(k, "orchestrator.typesense").value_or(true);
    else if (k.key == "mode") wanted = wanted && r.string(k, "orchestrator.typesense").value_or("") != "disabled";
  }
  if (wanted && !f.is_null())
    r.error(f, "orchestrator.typesense is not supported", "set enabled: false, or remove it", At::kKey);
}

void read_orchestrator(YamlReader& r, const Field& block, RunConfig& c) {
  const std::string w = "orchestrator";
  for (const auto& k : r.known_keys(r.mapping_or_null(block, w), w, kOrchestratorKeys)) {
    if (k.key == "workers") at_least(r, k, w, 1, c.workers);
    else if (k.key == "repeats") at_least(r, k, w, 1, c.repeats);
    else if (k.key == "max_attempt_retries") at_least(r, k, w, 0, c.max_attempt_retries);
    else if (k.key == "max_turns") at_least(r, k, w, 1, c.max_turns);
    else if (k.key == "max_budget_usd" || k.key == "max_requests_per_second") {
      if (k.is_null()) continue;
      auto v = r.number(k, w);
      bool budget = k.key == "max_budget_usd";
      if (v && (budget ? *v < 0 : *v <= 0)) r.error(k, w + "." + k.key + (budget ? " must not be negative" : " must be positive"));
      else if (v) (budget ? c.max_budget_usd : c.max_requests_per_second) = *v;
    } else if (k.key == "queue_backend") {
      auto v = r.string(k, w);
      if (v && *v == "postgres") r.error(k, "orchestrator.queue_backend 'postgres' is not supported", "forgectl keeps its queue in SQLite inside the run directory");
      else if (v && *v != "sqlite") r.error(k, "orchestrator.queue_backend must be 'sqlite', got '" + *v + "'");
    } else if (k.key == "queue_postgres_dsn") {
      if (!k.is_null()) r.error(k, "orchestrator.queue_postgres_dsn is not supported", "forgectl's queue is SQLite", At::kKey);
    } else if (k.key == "timeouts") {
      for (const auto& t : r.known_keys(r.mapping_or_null(k, "orchestrator.timeouts"), "orchestrator.timeouts", {"turn_s", "episode_s"}))
        if (auto v = seconds(r, t, "orchestrator.timeouts")) (t.key == "turn_s" ? c.turn_timeout : c.episode_timeout) = *v;
    } else if (k.key == "auto_start_services") {
      if (auto v = r.boolean(k, w)) c.auto_start_services = *v;
    } else if (k.key == "continue_prompt") {
      if (auto v = r.string(k, w)) c.continue_prompt = *v;
    } else if (k.key == "stuck_heuristics") {
      const std::string sw = "orchestrator.stuck_heuristics";
      for (const auto& s : r.known_keys(r.mapping_or_null(k, sw), sw, {"enabled", "max_repeated_tool_calls", "max_idle_turns"})) {
        if (s.key == "enabled") {
          if (auto v = r.boolean(s, sw)) c.stuck.enabled = *v;
        } else {
          at_least(r, s, sw, 1, s.key == "max_idle_turns" ? c.stuck.max_idle_turns : c.stuck.max_repeated_tool_calls);
        }
      }
    } else if (k.key == "max_infra_rate") {
      // A number or "N%": a percentage of the run's trials (docs/run-config.md).
      auto text = r.string(k, w);
      if (!text) continue;
      if (auto v = parse_percent(*text))
        c.max_infra_rate = *v;
      else
        r.error(k, w + ".max_infra_rate must be a percentage between 0 and 100 (5, 2.5 or 5%), got '" + *text + "'");
    } else if (k.key == "runtime") {
      // Tolokaforge's "docker" (the only value it knows) is forgectl's auto: the daemon's default.
      auto v = r.string(k, w);
      if (!v) continue;
      if (*v == "kubernetes" || *v == "k8s")
        r.error(k, "orchestrator.runtime '" + *v + "' is an orchestrator forgectl does not have; it runs Docker only",
                "give an OCI runtime (runc, crun, runsc), or auto");
      else if (auto bad = runtime_name_problem(*v); !bad.empty())
        r.error(k, "orchestrator.runtime: " + bad);
      else
        c.runtime = is_auto_runtime(*v) ? std::string() : *v;
    } else {
      read_typesense(r, k);
    }
  }
}

std::string resolve(const std::string& dir, const std::string& p) { return join_path(dir, p); }

void read_evaluation(YamlReader& r, const Field& block, const std::string& dir, RunConfig& c) {
  const std::string w = "evaluation";
  std::optional<Field> glob;
  for (const auto& k : r.known_keys(r.mapping_or_null(block, w), w,
                                    {"task_packs", "tasks_glob", "output_dir", "harness_adapter", "cache_images", "metrics"})) {
    if (k.key == "task_packs") {
      if (k.is_null()) continue;
      for (const auto& item : r.sequence(k, w)) {
        auto v = r.string(item, w);
        if (!v) continue;
        std::string p = resolve(dir, *v);
        if (file_kind(p) != FileKind::kDirectory) r.error(item, "evaluation.task_packs: '" + *v + "' is not a directory (relative paths start at the config file's directory)");
        else c.task_packs.push_back(p);
      }
    } else if (k.key == "tasks_glob") {
      glob = k;
      auto v = r.string(k, w);
      if (v && v->empty()) r.error(k, "evaluation.tasks_glob is empty");
      else if (v) c.tasks_glob = *v;
    } else if (k.key == "output_dir") {
      auto v = r.string(k, w);
      if (v && v->empty()) r.error(k, "evaluation.output_dir is empty");
      else if (v) c.output_dir = resolve(dir, *v);
    } else if (k.key == "harness_adapter") {
      const std::string hw = "evaluation.harness_adapter";
      for (const auto& h : r.known_keys(r.mapping_or_null(k, hw), hw, {"type", "params"})) {
        if (h.key == "type") {
          auto v = r.string(h, hw);
          if (v && *v != "native") r.error(h, "evaluation.harness_adapter.type '" + *v + "' is not supported", "forgectl reads native task packs");
        } else if (h.node.IsMap()) {
          if (auto j = yaml_to_json(r, h, hw + ".params")) c.harness_params_json = *j;
        } else if (!h.is_null()) {
          r.error(h, "evaluation.harness_adapter.params must be a mapping");
        }
      }
    } else if (k.key == "cache_images") {
      if (auto v = r.boolean(k, w)) c.cache_images = *v;
    } else {
      r.error(k, "evaluation.metrics is not supported", "forgectl always reports pass@k and pass^k", At::kKey);
    }
  }
  if (glob && !c.task_packs.empty() && fs::path(c.tasks_glob).is_absolute())
    r.error(*glob, "evaluation.tasks_glob must be relative when task_packs are given", "it is matched under each pack");
}

}  // namespace

Result<RunConfig> parse_run_config(std::string_view text, const std::string& path) {
  Diagnostics diags;
  YamlReader r(path, diags);
  auto root = r.parse(text);
  if (!root) return fail(diags.to_error());
  RunConfig c;
  std::error_code ec;
  c.path = fs::absolute(path, ec).lexically_normal().string();
  const std::string dir = fs::path(c.path).parent_path().string();
  for (const auto& k : r.known_keys(r.mapping_or_null(*root, ""), "", {"models", "orchestrator", "evaluation", "pricing_file"})) {
    if (k.key == "models") {
      c.models = read_models(r, k);
    } else if (k.key == "orchestrator") {
      read_orchestrator(r, k, c);
    } else if (k.key == "evaluation") {
      read_evaluation(r, k, dir, c);
    } else if (auto v = r.string(k, "")) {
      std::string p = resolve(dir, *v);
      if (file_kind(p) != FileKind::kFile) r.error(k, "'pricing_file': '" + *v + "' does not exist");
      else c.pricing_file = p;
    }
  }
  if (!diags.empty()) return fail(diags.to_error());
  return c;
}

Result<RunConfig> load_run_config(const std::string& path) {
  auto text = read_text(path);
  if (!text) return text.fail_with("loading run config");
  return parse_run_config(*text, path);
}

}  // namespace forge::manifest
